"""L1: one DQN update as the PyTorch tutorial writes it, with LEARNER.md's sampling.

The update's phases are methods (sample, to_device, forward_backward, optimise,
update_target) so that they can be timed one by one (`phases()`); later torch learners
(L2 compiled, L5 data-parallel) reuse this class and change one phase.
"""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np

from core.api import WEIGHT_KEYS, init_weights
from core.errors import StudyError
from core.learner import LearnConfig, LearnerImpl
from core.replay import Replay
from core.spec import CARTPOLE, REPLAY


def resolve_device(name: str):
    """'cuda' | 'cpu' | 'auto' -> torch.device; StudyError when CUDA is asked for but absent."""
    import torch
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda" or name.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise StudyError(f"learner device '{name}' requested but CUDA is not available here "
                             f"(torch {torch.__version__}); use --device cpu or auto")
        return torch.device(name)
    raise StudyError(f"unknown learner device '{name}'; use cuda, cpu or auto")


def make_qnet(hidden: int, env=CARTPOLE):
    import torch.nn as nn
    d, a = env.obs_dim, env.n_actions
    return nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, a))


def load_weights(net, w: Dict[str, np.ndarray]) -> None:
    import torch
    lin = [m for m in net if hasattr(m, "weight")]
    with torch.no_grad():
        for i, m in enumerate(lin, start=1):
            m.weight.copy_(torch.from_numpy(w[f"w{i}"]))
            m.bias.copy_(torch.from_numpy(w[f"b{i}"]))


def net_weights(net) -> Dict[str, np.ndarray]:
    lin = [m for m in net if hasattr(m, "weight")]
    out = {}
    for i, m in enumerate(lin, start=1):
        out[f"w{i}"] = m.weight.detach().to("cpu", copy=True).numpy()
        out[f"b{i}"] = m.bias.detach().to("cpu", copy=True).numpy()
    return {k: out[k] for k in WEIGHT_KEYS}


class TorchLearner(LearnerImpl):
    def __init__(self, cfg: LearnConfig, replay: Replay, device=None, fused: bool = True):
        import torch
        self.torch = torch
        self.cfg = cfg.learn_config().check_learn()
        torch.set_num_threads(self.cfg.threads)
        self.replay = replay
        self.device = device if device is not None else resolve_device(self.cfg.device)
        # the replay says which network and which rows: CartPole's float rows by default, or a
        # workload's own compact rows with `torch_rows` expanding them on the device (chess)
        env = replay.spec.env
        self.expand = getattr(replay, "torch_rows", None)
        w = init_weights(self.cfg.seed, self.cfg.hidden, env)
        self.policy = make_qnet(self.cfg.hidden, env).to(self.device)
        self.target = make_qnet(self.cfg.hidden, env).to(self.device)
        load_weights(self.policy, w)
        load_weights(self.target, w)
        for p in self.target.parameters():
            p.requires_grad_(False)
        self._pp = list(self.policy.parameters())
        self._tp = list(self.target.parameters())
        self.opt = torch.optim.AdamW(self._pp, lr=self.cfg.lr, betas=(self.cfg.beta1, self.cfg.beta2),
                                     eps=self.cfg.adam_eps, weight_decay=self.cfg.weight_decay,
                                     fused=fused)
        self.data = torch.from_numpy(replay.data)          # shares the replay's memory
        cuda = self.device.type == "cuda"
        # two pinned staging buffers on a GPU, so that sampling the next minibatch never
        # overwrites one whose asynchronous host-to-device copy is still in flight
        self.staging = [torch.empty((self.cfg.batch_size, self.data.shape[1]), dtype=self.data.dtype,
                                    pin_memory=cuda) for _ in range(2 if cuda else 1)]
        self.copied = [None] * len(self.staging)
        self.slot = 0
        self.updates = 0
        self._idx = None
        self._idx_pos = 0
        self.loss = None
        # what forward_backward and optimise call: L2 swaps in compiled versions of both
        self.loss_fn, self.step_fn = self.loss_of, self.opt.step

    # -- the phases of one update, separately callable so that they can be timed --------
    def plan(self, n: int) -> None:
        """Minibatch indices of the next n updates (the replay's size is fixed meanwhile)."""
        idx = self.replay.indices(self.cfg.seed, self.updates, n, self.cfg.batch_size)
        self._idx = self.torch.from_numpy(idx)
        self._idx_pos = 0

    def sample(self):
        if self._idx is None or self._idx_pos >= len(self._idx):
            self.plan(1)
        self.slot = (self.slot + 1) % len(self.staging)
        if self.copied[self.slot] is not None:
            self.copied[self.slot].synchronize()           # its previous copy has landed
        self.torch.index_select(self.data, 0, self._idx[self._idx_pos], out=self.staging[self.slot])
        self._idx_pos += 1
        return self.staging[self.slot]

    def to_device(self, rows):
        if self.device.type == "cpu":
            return rows
        d = rows.to(self.device, non_blocking=True)
        ev = self.torch.cuda.Event()
        ev.record()
        self.copied[self.slot] = ev
        return d

    def loss_of(self, rows, forward=None, scale=None):
        """LEARNER.md's loss on one minibatch (Double DQN target, Huber, mean). A
        data-parallel learner (L5) passes its wrapped policy as `forward` and sums its
        share of the rows times `scale` instead of taking the mean."""
        torch = self.torch
        if self.expand is None:
            s = REPLAY
            obs, nxt = rows[:, s.obs], rows[:, s.next_obs]
            act, rew, term, legal = rows[:, s.action], rows[:, s.reward], rows[:, s.terminated], None
        else:
            obs, act, rew, nxt, term, legal = self.expand(torch, rows)
        act = act.long().unsqueeze(1)
        q = (forward or self.policy)(obs).gather(1, act).squeeze(1)
        with torch.no_grad():
            # with a legal mask, the max and the argmax run over the next position's legal
            # actions only; a position with none (mate, stalemate) is terminal: q' = 0
            if self.cfg.double:
                qp = self.policy(nxt)
                if legal is not None:
                    qp = qp.masked_fill(~legal, float("-inf"))
                q_next = self.target(nxt).gather(1, qp.argmax(1, keepdim=True)).squeeze(1)
            else:
                qt = self.target(nxt)
                q_next = (qt if legal is None else qt.masked_fill(~legal, float("-inf"))).max(1).values
            if legal is not None:
                q_next = torch.where(legal.any(1), q_next, torch.zeros_like(q_next))
            y = rew + self.cfg.gamma * (1.0 - term) * q_next
        if scale is None:
            return torch.nn.functional.smooth_l1_loss(q, y)
        return torch.nn.functional.smooth_l1_loss(q, y, reduction="sum") * scale

    def forward_backward(self, rows):
        loss = self.loss_fn(rows)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        return loss

    def optimise(self):
        if self.cfg.grad_clip > 0:
            self.torch.nn.utils.clip_grad_norm_(self._pp, self.cfg.grad_clip, foreach=True)
        self.step_fn()

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

    # -- the learner interface ------------------------------------------------------------
    def learn(self, n: int, losses: Optional[np.ndarray] = None) -> None:
        if n <= 0:
            return
        self.plan(n)
        loss = None
        for i in range(n):
            loss = self.update()
            if losses is not None:
                losses[i] = loss.item()
        self.loss = loss          # a tensor: read lazily, no device sync per round

    def set_lr(self, lr: float) -> None:
        for g in self.opt.param_groups:
            g["lr"] = lr

    def weights(self) -> Dict[str, np.ndarray]:
        return net_weights(self.policy)

    def target_weights(self) -> Dict[str, np.ndarray]:
        return net_weights(self.target)

    def sync(self) -> None:
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)

    def phases(self):
        """(name, callable) of one update's phases, in order, for a per-phase profile."""
        state = {}

        def sample():
            state["rows"] = self.sample()

        def h2d():
            state["d"] = self.to_device(state["rows"])

        def fb():
            self.forward_backward(state["d"])
        return [("sample", sample), ("h2d", h2d), ("forward_backward", fb),
                ("optimiser", self.optimise), ("target", self.update_target)]
