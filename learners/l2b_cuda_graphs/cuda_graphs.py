"""L2b: L1's update as one CUDA graph, replayed once per update.

On a GPU, L1's update is a few dozen tiny kernels (64 x 128 matrices), each launched by
Python through the dispatcher: the GPU mostly waits for the CPU. A CUDA graph records the
whole update once (forward, backward, AdamW; torch.cuda.graph) and replays it with one
launch. What that takes, following PyTorch's "whole network capture" recipe:

- Static inputs: the graph reads its minibatch from `static_rows` [B, 11] on the GPU.
  learn(n) gathers the round's n minibatches on the host (LEARNER.md's indices, into a
  pinned buffer), copies them to the GPU in one transfer, and before each replay copies
  minibatch i into `static_rows` (a device-to-device copy, queued, no sync).
- A capturable optimiser: AdamW(fused=True, capturable=True) keeps its step count on
  the GPU and reads lr from a GPU tensor, so the replayed step counts itself and set_lr
  (a fill of that tensor) needs no re-capture. The fused kernel computes the bias
  corrections in double from the float32 step (LEARNER.md asks float64).
- Warm-up on a side stream before capture (creates AdamW's state, warms cuBLAS), then the
  weights, target and AdamW state are restored, so the warm-up leaves no trace. Gradients
  are set to None before capture, so the captured backward writes fresh .grad tensors in
  the graph's memory pool on every replay (no zero_grad needed).
- The hard target copy (1 update in 128) stays outside the graph, in place; a soft
  target's lerp runs every update and is captured.
- Losses: with `losses`, each replay's loss is copied to a device vector read once at
  the end of learn(); without, nothing is read back (no sync per update).

Not measured here: this study's machine has no GPU. `_emulate_on_cpu` (tests only) runs the
same static-buffer plumbing on the CPU with the graph replaced by a call of its body, so
that the staging, warm-up-and-restore, lr tensor and target logic are verified against L1.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from core.errors import StudyError
from core.learner import LearnConfig
from core.replay import Replay
from learners.l1_torch_eager.torch_eager import TorchLearner, resolve_device

WARMUP = 3          # iterations before capture (PyTorch's recipe uses 3)
CHUNK = 1024        # at most this many minibatches staged on the GPU at once


class GraphedLearner(TorchLearner):
    def __init__(self, cfg: LearnConfig, replay: Replay, _emulate_on_cpu: bool = False):
        import torch
        cfg = cfg.learn_config().check_learn()
        if _emulate_on_cpu:
            device = torch.device("cpu")
        else:
            if cfg.device == "cpu":
                raise StudyError("l2b_cuda_graphs runs only on a CUDA device; --device cpu is not supported")
            device = resolve_device("cuda")
        super().__init__(cfg, replay, device=device)
        c = self.cfg
        self.emulated = _emulate_on_cpu
        self.lr_t = torch.tensor(c.lr, dtype=torch.float32, device=device)
        self.opt = torch.optim.AdamW(self._pp, lr=self.lr_t, betas=(c.beta1, c.beta2), eps=c.adam_eps,
                                     weight_decay=c.weight_decay, fused=True, capturable=True)
        self.static_rows = torch.zeros((c.batch_size, self.data.shape[1]), dtype=self.data.dtype,
                                       device=device)
        self.static_loss = None
        self.graph = None
        self._pinned = self._rows = self._h2d_done = None

    # -- the update as the graph holds it ------------------------------------------------------
    def _body(self):
        """One update on static_rows (the captured work)."""
        torch = self.torch
        loss = self.loss_of(self.static_rows)
        loss.backward()
        if self.cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(self._pp, self.cfg.grad_clip, foreach=True)
        self.opt.step()
        if self.cfg.target == "soft":
            with torch.no_grad():
                torch._foreach_lerp_(self._tp, self._pp, self.cfg.tau)
        return loss

    def capture(self) -> None:
        """Warm up, undo the warm-up, capture the graph (once; the first learn() calls it)."""
        torch = self.torch
        saved = [p.detach().clone() for p in self._pp + self._tp]
        if self.emulated:
            for _ in range(WARMUP):
                self.opt.zero_grad(set_to_none=True)
                self._body()
        else:
            side = torch.cuda.Stream(self.device)
            side.wait_stream(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(side):
                for _ in range(WARMUP):
                    self.opt.zero_grad(set_to_none=True)
                    self._body()
            torch.cuda.current_stream(self.device).wait_stream(side)
        with torch.no_grad():
            for p, v in zip(self._pp + self._tp, saved):
                p.copy_(v)
            for st in self.opt.state.values():
                st["exp_avg"].zero_()
                st["exp_avg_sq"].zero_()
                st["step"].zero_()
        self.opt.zero_grad(set_to_none=True)
        if self.emulated:
            self.graph = "emulated"
            return
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            self.static_loss = self._body()
        self.graph = g

    def replay_update(self) -> None:
        """Run the captured update once on whatever static_rows holds."""
        if self.emulated:
            self.opt.zero_grad(set_to_none=True)     # a replay overwrites .grad; eager adds
            self.static_loss = self._body()
        else:
            self.graph.replay()

    def update_target(self):
        self.updates += 1
        if self.cfg.target == "hard" and self.updates % self.cfg.target_period == 0:
            with self.torch.no_grad():
                self.torch._foreach_copy_(self._tp, self._pp)

    # -- staging: a round's minibatches on the device in one copy ------------------------------
    def stage(self, n: int):
        """Minibatches of the next n updates, gathered on the host, copied to the device:
        a [n, B, 11] device tensor (valid until the next stage())."""
        torch = self.torch
        B, W = self.cfg.batch_size, self.data.shape[1]
        idx = self.replay.indices(self.cfg.seed, self.updates, n, B)
        if self._h2d_done is not None:
            self._h2d_done.synchronize()             # the last copy has left the pinned buffer
        if self._pinned is None or self._pinned.shape[0] < n:
            cuda = self.device.type == "cuda"
            self._pinned = torch.empty((n, B, W), dtype=self.data.dtype, pin_memory=cuda)
            self._rows = torch.empty((n, B, W), dtype=self.data.dtype, device=self.device)
        host = self._pinned[:n]
        torch.index_select(self.data, 0, torch.from_numpy(idx.reshape(-1)), out=host.view(n * B, W))
        rows = self._rows[:n]
        rows.copy_(host, non_blocking=True)
        if self.device.type == "cuda":
            self._h2d_done = torch.cuda.Event()
            self._h2d_done.record()
        return rows

    # -- the learner interface ------------------------------------------------------------
    def learn(self, n: int, losses: Optional[np.ndarray] = None) -> None:
        if n <= 0:
            return
        torch = self.torch
        if self.graph is None:
            self.capture()
        out = torch.empty(n, dtype=torch.float32, device=self.device) if losses is not None else None
        done = 0
        while done < n:
            m = min(CHUNK, n - done)
            rows = self.stage(m)
            for i in range(m):
                self.static_rows.copy_(rows[i], non_blocking=True)
                self.replay_update()
                if out is not None:
                    out[done + i].copy_(self.static_loss.detach(), non_blocking=True)
                self.update_target()
            done += m
        self.loss = self.static_loss.detach().clone()
        if out is not None:
            losses[:n] = out.cpu().numpy()

    def set_lr(self, lr: float) -> None:
        self.lr_t.fill_(lr)

    def phases(self):
        """The update's phases as they run here: staging one minibatch (gather + H2D), the
        graph replay (with the copy into static_rows), the target step."""
        if self.graph is None:
            self.capture()
        state = {}

        def stage():
            state["rows"] = self.stage(1)

        def replay():
            self.static_rows.copy_(state["rows"][0], non_blocking=True)
            self.replay_update()
        return [("stage_h2d", stage), ("graph_replay", replay), ("target", self.update_target)]

    def close(self) -> None:
        self.graph = self.static_loss = None
        self._pinned = self._rows = self._h2d_done = None
