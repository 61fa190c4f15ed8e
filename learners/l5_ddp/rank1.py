"""L5's rank 1: the spawned child process (see ddp.py for the design)."""
from __future__ import annotations

import datetime
import os
import signal

import numpy as np

from core.learner import LearnConfig
from core.procutil import die_with_parent
from core.replay import shared_rows

from .ddp import (CONNECT_TIMEOUT_S, RANKS, HalfBatchLearner, _MappedReplay, _one_line, make_group,
                  set_group_timeout, time_allreduce)


def rank1_main(conn, parent: int, cfg_dict: dict, segment: str, capacity: int, port: int,
               timed_comm: bool) -> None:
    """Rank 1: map the replay, join the group, then do what rank 0's messages say. It ends
    with os._exit (an interpreter that imported torch takes seconds to tear down on a busy
    machine, and there is nothing to flush but the pipe)."""
    # SIGKILL when the parent dies, and a watch of its pid (the race before prctl)
    if not die_with_parent(signal.SIGKILL, parent, poll_s=0.2, exit_code=3):
        os._exit(3)
    status, pg = 1, None
    try:
        import torch.distributed as dist
        rows = shared_rows(segment, capacity)
        conn.send(("mapped", None))
        store = dist.TCPStore("127.0.0.1", port, RANKS, False,
                              timeout=datetime.timedelta(seconds=CONNECT_TIMEOUT_S))
        pg = make_group(store, 1, CONNECT_TIMEOUT_S)
        learner = HalfBatchLearner(LearnConfig(**cfg_dict), _MappedReplay(rows), 1, pg, timed_comm)
        conn.send(("ready", os.getpid()))
    except BaseException as e:
        _send_quietly(conn, ("error", f"rank 1 failed to start: {type(e).__name__}: {_one_line(e)}"))
        os._exit(1)
    try:
        while True:
            msg = conn.recv()
            kind = msg[0]
            if kind == "close":
                status = 0
                break
            if kind == "timeout":
                set_group_timeout(pg, msg[1])
            elif kind == "allreduce":                # comm_profile: rank 1's side
                _, n, numel = msg
                conn.send(("done", time_allreduce(pg, n, numel)))
            elif kind == "learn":
                _, first, n, size, lr, want_losses, reply = msg
                if first != learner.updates:
                    raise RuntimeError(f"rank 1 is at update {learner.updates}, asked for {first}")
                learner.replay.size = size
                learner.set_lr(lr)
                losses = np.zeros(n, np.float32) if want_losses else None
                c0 = learner.comm_s
                learner.learn(n, losses)
                if reply:
                    conn.send(("done", (losses, learner.comm_s - c0)))
            else:
                raise RuntimeError(f"rank 1 got an unknown message {kind!r}")
    except (EOFError, KeyboardInterrupt, BrokenPipeError):
        pass
    except BaseException as e:
        _send_quietly(conn, ("error", f"rank 1 failed at update {learner.updates}: "
                                      f"{type(e).__name__}: {_one_line(e)}"))
    try:
        pg.shutdown()
        conn.close()
    finally:
        os._exit(status)


def _send_quietly(conn, msg) -> None:
    try:
        conn.send(msg)
    except Exception:
        pass
