"""A DQN learner fed by any version's generator: the end-to-end half of the study.

The learner is the one of the PyTorch DQN tutorial: policy and target networks
Linear(4,128) -> ReLU -> Linear(128,128) -> ReLU -> Linear(128,2), Huber loss
(SmoothL1), AdamW, discount 0.99, and a target network that follows the policy network
(a hard copy every `target_period` updates, or a soft update with `tau`).

Training goes in *rounds*: the actor (a version's generator) produces N x T transitions,
they are copied into a preallocated ring buffer, the learner takes U gradient steps on
minibatches sampled from the buffer, and the new weights go back to the actor
(`gen.set_weights`) with the next epsilon (`gen.set_epsilon`). In pipelined mode the actor
generates round k+1 while the learner learns on round k, with weights one round stale.

Everything here is measured, never assumed: `train()` returns the rounds, updates and
transitions it took to solve CartPole-v1 and where its wall-clock time went;
`measure_learner()` times one gradient update phase by phase on the device present.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import queue
import statistics
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Dict, List, Optional

import numpy as np

from .api import GenConfig, VersionError

ROW_WIDTH = 11          # obs(4) next_obs(4) action reward terminated, one float32 row


# --------------------------------------------------------------------------- config

@dataclass
class TrainConfig:
    """One training run. Defaults chosen by experiment to solve CartPole-v1 reliably on CPU.

    Before they were adopted, 20 runs on v5b_simd (seeds 0-9, alternating and pipelined)
    all solved within 500 rounds; the tutorial-like settings used before (constant rate,
    soft target, no Double DQN) had solved 3 of 5. Measured on the way (v5b_simd, cap 500
    rounds): a constant rate of 2.3e-3 (no Double DQN, final epsilon 0.04) solved 0 of 5;
    decaying to 2e-4 over 150 rounds, with Double DQN and final epsilon 0.02, 10 of 10
    alternating but 4 of 5 pipelined (1 of 5 with the target copied every 512 updates
    instead of once a round, 4 of 5 with minibatches of 128); decaying to
    5e-5, 10 of 10 alternating and 9 of 10 pipelined (one run lost its policy after the
    rate had decayed); with a 500k buffer as well (no transition overwritten within 500
    rounds, so early failures stay in the samples) 10 of 10 both ways."""
    version: str = "v1_python"      # which rung generates the transitions
    envs: int = 20                  # N environments per round (the study's batch)
    steps: int = 32                 # T steps per round
    updates_per_round: int = 128    # U gradient steps after each round
    lr: float = 2.3e-3              # AdamW learning rate of round 0 ...
    lr_end: float = 5e-5            # ... decaying linearly to this (0: constant) ...
    lr_decay_rounds: int = 150      # ... over this many rounds
    batch_size: int = 64            # minibatch sampled from the buffer per update
    buffer_size: int = 500_000      # ring-buffer capacity in transitions (22 MB)
    gamma: float = 0.99             # discount
    target: str = "hard"            # "hard": copy every target_period updates; "soft": lerp by tau
    target_period: int = 128        # updates between hard copies (= once a round at U=128)
    tau: float = 0.01               # soft-update rate (target="soft")
    eps_start: float = 1.0          # epsilon of round 0
    eps_end: float = 0.02           # final epsilon
    eps_decay_rounds: int = 13      # linear decay over this many rounds
    weight_decay: float = 0.0       # AdamW's decoupled weight decay
    double: bool = True             # Double DQN targets (action chosen by the policy network)
    grad_clip: float = 0.0          # gradient-norm clip (0: none; Huber already bounds the gradient)
    hidden: int = 128
    seed: int = 0
    max_rounds: int = 500
    threshold: float = 475.0        # mean return of the last `window` episodes, and of the eval
    window: int = 100
    eval_episodes: int = 20         # greedy (epsilon 0) evaluation in Gymnasium to confirm
    eval_cooldown: int = 5          # rounds between two confirmation attempts
    learner_device: str = "auto"    # cuda | cpu | auto
    pipelined: bool = False         # overlap generation of round k+1 with learning on round k
    actor: str = "auto"             # pipelined actor: "process", "thread" or "auto" (= process)
    workers: int = 1                # the generator's workers/threads/ranks
    torch_threads: int = 1          # intra-op threads of the learner (tiny network: 1 is best)

    def check(self):
        for name in ("envs", "steps", "updates_per_round", "batch_size", "buffer_size",
                     "max_rounds", "window", "eval_episodes", "target_period", "workers",
                     "torch_threads", "hidden"):
            v = getattr(self, name)
            if not isinstance(v, int) or v <= 0:
                raise VersionError(f"{name} must be a positive integer, got {v!r}")
        if self.envs * self.steps > self.buffer_size:
            raise VersionError(f"one round (N*T = {self.envs * self.steps}) does not fit in the "
                               f"replay buffer of {self.buffer_size} transitions")
        if self.batch_size > self.envs * self.steps:
            raise VersionError(f"batch size {self.batch_size} exceeds one round of transitions "
                               f"(N*T = {self.envs * self.steps}); learning starts after round 0")
        if not (self.lr > 0 and np.isfinite(self.lr)):
            raise VersionError(f"learning rate must be a positive number, got {self.lr}")
        if not 0 < self.gamma <= 1:
            raise VersionError(f"gamma must be in (0, 1], got {self.gamma}")
        if self.target not in ("hard", "soft"):
            raise VersionError(f"target must be 'hard' or 'soft', got {self.target!r}")
        if not 0 < self.tau <= 1:
            raise VersionError(f"tau must be in (0, 1], got {self.tau}")
        for name in ("eps_start", "eps_end"):
            if not 0 <= getattr(self, name) <= 1:
                raise VersionError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if self.actor not in ("auto", "process", "thread", "serial"):
            raise VersionError(f"actor must be process, thread or auto, got {self.actor!r}")
        resolve_device(self.learner_device)
        return self

    def learning_rate(self, round_index: int) -> float:
        if self.lr_end <= 0:
            return self.lr
        frac = min(1.0, round_index / max(1, self.lr_decay_rounds))
        return self.lr + (self.lr_end - self.lr) * frac

    def epsilon(self, round_index: int) -> float:
        frac = min(1.0, round_index / max(1, self.eps_decay_rounds))
        return self.eps_start + (self.eps_end - self.eps_start) * frac


def resolve_device(name: str):
    """'cuda' | 'cpu' | 'auto' -> torch.device; a clear VersionError otherwise."""
    import torch
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda" or name.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise VersionError(f"learner device '{name}' requested but CUDA is not available "
                               f"here (torch {torch.__version__}); use --learner-device cpu or auto")
        return torch.device(name)
    raise VersionError(f"unknown learner device '{name}'; use cuda, cpu or auto")


def device_name(device) -> str:
    import torch
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    from .machine import provenance
    try:
        cpu = provenance().get("machine", {}).get("cpu") or ""
    except Exception:
        cpu = ""
    return f"cpu ({cpu})" if cpu else "cpu"


# --------------------------------------------------------------------------- learner

def make_qnet(hidden: int = 128):
    import torch.nn as nn
    return nn.Sequential(nn.Linear(4, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, 2))


class ReplayBuffer:
    """A preallocated ring buffer: one float32 row of 11 numbers per transition.

    Rows hold obs, next_obs, action, reward and terminated side by side, so that a
    minibatch is one index_select and one host-to-device copy. Only `terminated` cuts the
    bootstrap; a truncated step keeps bootstrapping from its final observation.
    """

    def __init__(self, capacity: int, pin: bool = False):
        import torch
        self.capacity = capacity
        self.data = torch.zeros((capacity, ROW_WIDTH), dtype=torch.float32, pin_memory=pin)
        self.np = self.data.numpy()
        self.pos = 0
        self.size = 0

    def add(self, batch: Dict[str, np.ndarray]) -> int:
        """Copy a time-major batch [T, N, ...] in (the arrays are only valid until the next
        generate call, so they are copied here, never kept)."""
        obs = batch["obs"]
        m = obs.shape[0] * obs.shape[1]
        if m > self.capacity:
            raise VersionError(f"a batch of {m} transitions exceeds the buffer ({self.capacity})")
        start, end = self.pos, self.pos + m
        parts = [(start, min(end, self.capacity), 0)]
        if end > self.capacity:
            parts.append((0, end - self.capacity, self.capacity - start))
        cols = [(slice(0, 4), obs.reshape(m, 4)),
                (slice(4, 8), batch["next_obs"].reshape(m, 4)),
                (8, batch["action"].reshape(m)),
                (9, batch["reward"].reshape(m)),
                (10, batch["terminated"].reshape(m))]
        for a, b, off in parts:
            for col, src in cols:
                self.np[a:b, col] = src[off:off + (b - a)]
        self.pos = end % self.capacity
        self.size = min(self.capacity, self.size + m)
        return m


class Learner:
    def __init__(self, cfg: TrainConfig, device=None):
        import torch
        self.torch = torch
        self.cfg = cfg
        self.device = device if device is not None else resolve_device(cfg.learner_device)
        torch.manual_seed(cfg.seed & 0x7FFFFFFFFFFFFFFF)
        self.policy = make_qnet(cfg.hidden).to(self.device)
        self.target = make_qnet(cfg.hidden).to(self.device)
        self.target.load_state_dict(self.policy.state_dict())
        for p in self.target.parameters():
            p.requires_grad_(False)
        self.opt = torch.optim.AdamW(self.policy.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay,
                                     fused=True)
        cuda = self.device.type == "cuda"
        self.buffer = ReplayBuffer(cfg.buffer_size, pin=cuda)
        self.rng = torch.Generator().manual_seed(cfg.seed & 0x7FFFFFFFFFFFFFFF)
        # two pinned staging buffers on a GPU, so that sampling the next minibatch never
        # overwrites one whose asynchronous host-to-device copy is still in flight
        self.staging = [torch.empty((cfg.batch_size, ROW_WIDTH), dtype=torch.float32, pin_memory=cuda)
                        for _ in range(2 if cuda else 1)]
        self.copied = [None] * len(self.staging)
        self.slot = 0
        self.updates = 0
        self.loss = float("nan")
        self._pp = list(self.policy.parameters())
        self._tp = list(self.target.parameters())

    # -- the phases of one update, separately callable so that they can be timed
    def sample(self):
        self.slot = (self.slot + 1) % len(self.staging)
        if self.copied[self.slot] is not None:
            self.copied[self.slot].synchronize()       # its previous copy has landed
        idx = self.torch.randint(0, self.buffer.size, (self.cfg.batch_size,), generator=self.rng)
        self.torch.index_select(self.buffer.data, 0, idx, out=self.staging[self.slot])
        return self.staging[self.slot]

    def to_device(self, rows):
        if self.device.type == "cpu":
            return rows
        d = rows.to(self.device, non_blocking=True)
        ev = self.torch.cuda.Event()
        ev.record()
        self.copied[self.slot] = ev
        return d

    def forward_backward(self, rows):
        torch = self.torch
        obs, nxt = rows[:, 0:4], rows[:, 4:8]
        act = rows[:, 8].long().unsqueeze(1)
        rew, term = rows[:, 9], rows[:, 10]
        q = self.policy(obs).gather(1, act).squeeze(1)
        with torch.no_grad():
            if self.cfg.double:
                a_next = self.policy(nxt).argmax(1, keepdim=True)
                q_next = self.target(nxt).gather(1, a_next).squeeze(1)
            else:
                q_next = self.target(nxt).max(1).values
            y = rew + self.cfg.gamma * (1.0 - term) * q_next
        loss = torch.nn.functional.smooth_l1_loss(q, y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        return loss

    def optimise(self):
        if self.cfg.grad_clip > 0:
            self.torch.nn.utils.clip_grad_norm_(self._pp, self.cfg.grad_clip, foreach=True)
        self.opt.step()

    def update_target(self):
        self.updates += 1
        with self.torch.no_grad():
            if self.cfg.target == "soft":
                self.torch._foreach_lerp_(self._tp, self._pp, self.cfg.tau)
            elif self.updates % self.cfg.target_period == 0:
                self.torch._foreach_copy_(self._tp, self._pp)

    def update(self):
        loss = self.forward_backward(self.to_device(self.sample()))
        self.optimise()
        self.update_target()
        return loss

    def set_lr(self, lr: float):
        for g in self.opt.param_groups:
            g["lr"] = lr

    def learn(self, n: int):
        loss = None
        for _ in range(n):
            loss = self.update()
        if loss is not None:
            self.loss = loss          # a tensor: read lazily, no device sync per round

    def weights_numpy(self) -> Dict[str, np.ndarray]:
        """The policy network as the six float32 arrays of the contract (copies)."""
        lin = [m for m in self.policy if hasattr(m, "weight")]
        out = {}
        for i, m in enumerate(lin, start=1):
            out[f"w{i}"] = m.weight.detach().to("cpu", copy=True).numpy()
            out[f"b{i}"] = m.bias.detach().to("cpu", copy=True).numpy()
        return out

    def sync(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)


# --------------------------------------------------------------------------- episodes

class EpisodeTracker:
    """Per-environment step counters across batches: an episode's return is its length."""

    def __init__(self, n: int):
        self.length = np.zeros(n, np.int64)
        self.returns: List[int] = []
        self.end_round: List[int] = []

    def observe(self, batch, round_index: int):
        done = batch["terminated"] | batch["truncated"]
        for t in range(done.shape[0]):
            self.length += 1
            d = done[t]
            if d.any():
                self.returns.extend(self.length[d].tolist())
                self.end_round.extend([round_index] * int(d.sum()))
                self.length[d] = 0

    def mean_last(self, k: int) -> float:
        if not self.returns:
            return float("nan")
        return float(np.mean(self.returns[-k:]))


def greedy_eval(policy_weights: Dict[str, np.ndarray], episodes: int = 20, seed: int = 12345,
                hidden: int = 128) -> List[int]:
    """Returns of `episodes` greedy (epsilon 0) episodes in Gymnasium's own CartPole-v1.

    An independent check: Gymnasium's environment (with its 500-step TimeLimit), its own
    seeding, and the policy evaluated in float32 NumPy with argmax ties to the lower index.
    """
    import gymnasium as gym
    w = policy_weights
    envs = [gym.make("CartPole-v1") for _ in range(episodes)]
    obs = np.stack([e.reset(seed=seed + i)[0] for i, e in enumerate(envs)]).astype(np.float32)
    alive = np.ones(episodes, bool)
    ret = np.zeros(episodes, np.int64)
    try:
        while alive.any():
            h = np.maximum(obs @ w["w1"].T + w["b1"], 0)
            h = np.maximum(h @ w["w2"].T + w["b2"], 0)
            q = h @ w["w3"].T + w["b3"]
            act = (q[:, 1] > q[:, 0]).astype(np.int64)
            for i in np.flatnonzero(alive):
                o, _, term, trunc, _ = envs[i].step(int(act[i]))
                obs[i] = o
                ret[i] += 1
                if term or trunc:
                    alive[i] = False
    finally:
        for e in envs:
            e.close()
    return ret.tolist()


# --------------------------------------------------------------------------- actors

def _gen_config(cfg: TrainConfig, weights) -> GenConfig:
    return GenConfig(n_envs=cfg.envs, seed=cfg.seed, policy="egreedy",
                     epsilon=cfg.epsilon(0), weights=weights, workers=cfg.workers)


def open_version(name: str):
    from .discover import get_version
    v = get_version(name)
    why = v.unavailable_reason()
    if why:
        raise VersionError(f"{v.name} cannot run here: {why}")
    return v


class SerialActor:
    """The generator in this process: request() pushes weights, result() generates."""
    kind = "serial"

    def __init__(self, version_name: str, gcfg: GenConfig):
        self.gen = open_version(version_name).module.make_generator(gcfg)
        self._T = None

    def request(self, T, weights, epsilon):
        if weights is not None:
            self.gen.set_weights(weights)
        self.gen.set_epsilon(epsilon)
        self._T = T

    def result(self):
        t0 = time.perf_counter()
        b = self.gen.generate(self._T)
        return b, time.perf_counter() - t0

    def close(self):
        self.gen.close()


class ThreadActor:
    """The generator in a background thread. Overlaps only if generate() releases the GIL
    (native rungs do; pure-Python rungs do not, and then the thread buys nothing)."""
    kind = "thread"

    def __init__(self, version_name: str, gcfg: GenConfig):
        self.inner = SerialActor(version_name, gcfg)
        self.jobs: "queue.Queue" = queue.Queue()
        self.out: "queue.Queue" = queue.Queue()
        self.th = threading.Thread(target=self._loop, daemon=True)
        self.th.start()

    def _loop(self):
        while True:
            job = self.jobs.get()
            if job is None:
                return
            try:
                self.inner.request(*job)
                self.out.put(self.inner.result())
            except BaseException as e:  # hand the error to the learner thread
                self.out.put(e)

    def request(self, T, weights, epsilon):
        self.jobs.put((T, weights, epsilon))

    def result(self):
        r = self.out.get()
        if isinstance(r, BaseException):
            raise r
        return r

    def close(self):
        self.jobs.put(None)
        self.th.join(timeout=30)
        self.inner.close()


def _actor_process(conn, version_name, gcfg):
    try:
        actor = SerialActor(version_name, gcfg)
    except BaseException as e:
        conn.send(("error", f"{type(e).__name__}: {e}"))
        return
    conn.send(("ready", None))
    try:
        while True:
            msg = conn.recv()
            if msg is None:
                break
            actor.request(*msg)
            b, dt = actor.result()
            conn.send(("batch", ({k: np.ascontiguousarray(v) for k, v in b.items()}, dt)))
    except (EOFError, KeyboardInterrupt):
        pass
    finally:
        actor.close()


class ProcessActor:
    """The generator in a child process (spawned): overlaps with any rung, GIL or not.
    Batches come back pickled through a pipe (N*T = 640 transitions: about 30 KB)."""
    kind = "process"

    def __init__(self, version_name: str, gcfg: GenConfig):
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_actor_process, args=(child, version_name, gcfg), daemon=True)
        self.proc.start()
        child.close()
        tag, info = self.conn.recv()
        if tag == "error":
            self.proc.join(timeout=10)
            raise VersionError(f"actor process for {version_name} failed to start: {info}")

    def request(self, T, weights, epsilon):
        self.conn.send((T, weights, epsilon))

    def result(self):
        tag, payload = self.conn.recv()
        return payload

    def close(self):
        try:
            self.conn.send(None)
        except (OSError, BrokenPipeError):
            pass
        self.proc.join(timeout=30)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(timeout=5)


def make_actor(cfg: TrainConfig, weights):
    gcfg = _gen_config(cfg, weights)
    if not cfg.pipelined or cfg.actor == "serial":
        return SerialActor(cfg.version, gcfg)
    if cfg.actor == "thread":
        return ThreadActor(cfg.version, gcfg)
    return ProcessActor(cfg.version, gcfg)


# --------------------------------------------------------------------------- training

@dataclass
class TrainResult:
    config: dict
    solved: bool
    rounds: int                  # rounds generated and learned on, up to and including the solving one
    updates: int
    transitions: int
    wall_s: float                # the training loop, confirmation evaluations excluded
    eval_s: float                # time spent in greedy confirmation evaluations
    startup_s: float             # building the actor (and spawning it) and the learner
    gen_s: float                 # sum of generate() times as seen by the actor
    wait_s: float                # time the learner waited for a batch
    store_s: float               # copying batches into the buffer + episode bookkeeping
    learn_s: float               # U updates per round
    push_s: float                # weights to numpy + set_weights/set_epsilon (serial) or send
    final_mean_return: float
    eval_returns: List[int]
    evals: int
    returns: List[int] = field(repr=False)
    end_round: List[int] = field(repr=False)
    actor: str = "serial"
    device: str = "cpu"
    weights: Optional[Dict[str, np.ndarray]] = field(default=None, repr=False)

    def row(self) -> dict:
        d = asdict(self)
        d.pop("weights", None)
        return d


def train(cfg: TrainConfig, progress: Optional[Callable[[str], None]] = None,
          every: int = 10) -> TrainResult:
    """Train until solved (or max_rounds). See the module docstring for the round structure."""
    import torch
    cfg.check()
    torch.set_num_threads(cfg.torch_threads)
    t_start = time.perf_counter()
    learner = Learner(cfg)
    weights = learner.weights_numpy()
    actor = make_actor(cfg, weights)
    tracker = EpisodeTracker(cfg.envs)
    startup_s = time.perf_counter() - t_start
    gen_s = wait_s = store_s = learn_s = push_s = eval_s = 0.0
    solved, evals, eval_returns, last_eval = False, 0, [], -10**9
    rounds = 0
    pending = weights                       # what the actor gets with its next request
    try:
        actor.request(cfg.steps, None, cfg.epsilon(0))
        t_loop = time.perf_counter()
        for k in range(cfg.max_rounds):
            t0 = time.perf_counter()
            batch, g = actor.result()
            t1 = time.perf_counter()
            learner.buffer.add(batch)
            tracker.observe(batch, k)
            t2 = time.perf_counter()
            if cfg.pipelined and k + 1 < cfg.max_rounds:
                actor.request(cfg.steps, pending, cfg.epsilon(k + 1))     # one round stale
            t3 = time.perf_counter()
            if cfg.lr_end > 0:
                learner.set_lr(cfg.learning_rate(k))
            learner.learn(cfg.updates_per_round)
            learner.sync()
            t4 = time.perf_counter()
            pending = learner.weights_numpy()
            if not cfg.pipelined and k + 1 < cfg.max_rounds:
                actor.request(cfg.steps, pending, cfg.epsilon(k + 1))
            t5 = time.perf_counter()
            gen_s += g
            wait_s += t1 - t0
            store_s += t2 - t1
            learn_s += t4 - t3
            push_s += (t3 - t2) + (t5 - t4)
            rounds = k + 1
            mean = tracker.mean_last(cfg.window)
            if progress and (k % every == 0):
                progress(f"round {k:4d}  transitions {rounds * cfg.envs * cfg.steps:7d}  "
                         f"mean return {mean:6.1f}  epsilon {cfg.epsilon(k):.3f}  "
                         f"elapsed {time.perf_counter() - t_loop:6.1f}s")
            if (len(tracker.returns) >= cfg.window and mean >= cfg.threshold
                    and k - last_eval >= cfg.eval_cooldown):
                te = time.perf_counter()
                eval_returns = greedy_eval(pending, cfg.eval_episodes, seed=10_000 + 97 * cfg.seed,
                                           hidden=cfg.hidden)
                eval_s += time.perf_counter() - te
                evals += 1
                last_eval = k
                if progress:
                    progress(f"round {k:4d}  greedy evaluation: mean {np.mean(eval_returns):.1f} "
                             f"over {len(eval_returns)} episodes")
                if np.mean(eval_returns) >= cfg.threshold:
                    solved = True
                    break
        loop_s = time.perf_counter() - t_loop - eval_s
    finally:
        if cfg.pipelined and rounds < cfg.max_rounds:
            try:
                actor.result()          # drain the request in flight
            except Exception:
                pass
        actor.close()
    return TrainResult(
        config=asdict(cfg), solved=solved, rounds=rounds,
        updates=rounds * cfg.updates_per_round, transitions=rounds * cfg.envs * cfg.steps,
        wall_s=loop_s, eval_s=eval_s, startup_s=startup_s, gen_s=gen_s, wait_s=wait_s,
        store_s=store_s, learn_s=learn_s, push_s=push_s,
        final_mean_return=tracker.mean_last(cfg.window), eval_returns=eval_returns, evals=evals,
        returns=tracker.returns, end_round=tracker.end_round, actor=actor.kind,
        device=str(learner.device), weights=pending)


def train_quiet(cfg_dict: dict) -> dict:
    """Process-pool entry point: one independent experiment, returns its row (no weights)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cfg = TrainConfig(**cfg_dict)
    try:
        return train(cfg).row()
    except VersionError as e:
        return {"config": cfg_dict, "error": str(e)}


def run_parallel(configs: List[dict], processes: int = 2,
                 progress: Optional[Callable[[str], None]] = None) -> List[dict]:
    """Independent experiments in a pool of `processes` spawned processes; rows in input order."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    out: List[Optional[dict]] = [None] * len(configs)
    if processes <= 1:
        for i, c in enumerate(configs):
            out[i] = train_quiet(c)
            if progress:
                progress(f"experiment {i + 1}/{len(configs)} done")
        return out
    with ProcessPoolExecutor(max_workers=processes, mp_context=mp.get_context("spawn")) as ex:
        futs = {ex.submit(train_quiet, c): i for i, c in enumerate(configs)}
        done = 0
        for f in as_completed(futs):
            out[futs[f]] = f.result()
            done += 1
            if progress:
                r = out[futs[f]]
                what = (f"rounds {r['rounds']} solved={r['solved']} {r['wall_s']:.1f}s"
                        if "rounds" in r else r.get("error", "?"))
                progress(f"experiment {done}/{len(configs)}: {what}")
    return out


# --------------------------------------------------------------------------- learner cost

def _median_per(fn, n, reps):
    """Median over `reps` chunks of the time per call of fn() run n times."""
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n)
    return statistics.median(samples), samples


def measure_learner(cfg: TrainConfig, n_updates: int = 200, reps: int = 5,
                    versions: Optional[List[str]] = None) -> dict:
    """Time one gradient update phase by phase, plus the per-round costs, on cfg's device.

    Each phase is timed on its own over many updates (with a device synchronisation after
    it when the device is a GPU, so the time lands in the phase that caused it); the whole
    update is also timed uninstrumented, which is the figure the estimate uses.
    """
    import torch
    torch.set_num_threads(cfg.torch_threads)
    learner = Learner(cfg)
    rs = np.random.default_rng(0)
    fake = {"obs": rs.normal(0, 0.1, (cfg.steps, cfg.envs, 4)).astype(np.float32),
            "next_obs": rs.normal(0, 0.1, (cfg.steps, cfg.envs, 4)).astype(np.float32),
            "action": rs.integers(0, 2, (cfg.steps, cfg.envs)).astype(np.int64),
            "reward": np.ones((cfg.steps, cfg.envs), np.float32),
            "terminated": rs.random((cfg.steps, cfg.envs)) < 0.05,
            "truncated": np.zeros((cfg.steps, cfg.envs), bool)}
    while learner.buffer.size < cfg.buffer_size:
        learner.buffer.add(fake)
    sync = learner.sync
    for _ in range(50):
        learner.update()
    sync()

    phases = {"sample": [], "h2d": [], "forward_backward": [], "optimiser": [], "target": []}
    pc = time.perf_counter
    for _ in range(reps):
        acc = dict.fromkeys(phases, 0.0)
        for _ in range(n_updates):
            t0 = pc(); rows = learner.sample(); t1 = pc()
            d = learner.to_device(rows); sync(); t2 = pc()
            learner.forward_backward(d); sync(); t3 = pc()
            learner.optimise(); sync(); t4 = pc()
            learner.update_target(); sync(); t5 = pc()
            acc["sample"] += t1 - t0
            acc["h2d"] += t2 - t1
            acc["forward_backward"] += t3 - t2
            acc["optimiser"] += t4 - t3
            acc["target"] += t5 - t4
        for k in phases:
            phases[k].append(acc[k] / n_updates)

    def whole():
        learner.learn(n_updates)
        sync()
    update_s, update_samples = _median_per(whole, 1, reps)
    update_s /= n_updates
    update_samples = [s / n_updates for s in update_samples]

    def hard_copy():
        with torch.no_grad():
            torch._foreach_copy_(learner._tp, learner._pp)
        sync()
    copy_s, _ = _median_per(hard_copy, 50, reps)
    store_s, _ = _median_per(lambda: (learner.buffer.add(fake),
                                      EpisodeTracker(cfg.envs).observe(fake, 0)), 20, reps)
    to_numpy_s, _ = _median_per(learner.weights_numpy, 50, reps)

    push = {}
    w = learner.weights_numpy()
    for name in versions or []:
        try:
            gen = open_version(name).module.make_generator(_gen_config(cfg, w))
        except Exception as e:
            push[name] = {"error": f"{type(e).__name__}: {e}"}
            continue
        try:
            s, _ = _median_per(lambda: (gen.set_weights(w), gen.set_epsilon(0.05)), 10, reps)
            push[name] = {"set_weights_s": s}
        finally:
            gen.close()

    med = {k: statistics.median(v) for k, v in phases.items()}
    return {
        "device": str(learner.device), "device_name": device_name(learner.device),
        "torch_version": torch.__version__, "torch_threads": torch.get_num_threads(),
        "batch_size": cfg.batch_size, "hidden": cfg.hidden, "target": cfg.target,
        "target_period": cfg.target_period, "envs": cfg.envs, "steps": cfg.steps,
        "n_updates": n_updates, "reps": reps,
        "phase_s": med, "phase_samples_s": phases, "phase_sum_s": sum(med.values()),
        "update_s": update_s, "update_samples_s": update_samples,
        "hard_copy_s": copy_s,
        "store_round_s": store_s, "weights_to_numpy_s": to_numpy_s, "push_by_version": push,
    }
