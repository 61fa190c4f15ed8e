"""TrainConfig: one training run, every setting written once (the CLI is built from it)."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

from core.errors import StudyError
from core.learner import LearnConfig, _h
from core.spec import CARTPOLE


class RunSettings:
    """What every training run's config shares: the epsilon schedule (fields eps_start,
    eps_end, eps_decay_rounds) and the round trip through a results row."""

    def epsilon(self, round_index: int) -> float:
        frac = min(1.0, round_index / max(1, self.eps_decay_rounds))
        return self.eps_start + (self.eps_end - self.eps_start) * frac

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict):
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


@dataclass
class TrainConfig(RunSettings, LearnConfig):
    """A run: a rung generates, a learner learns, in rounds, until CartPole-v1 is solved.

    The learner's settings (LearnConfig) and these loop settings. Defaults chosen by
    experiment to solve reliably on CPU. Before they were adopted, 20 runs on v5b_simd
    (seeds 0-9, alternating and pipelined) all solved within 500 rounds; the tutorial-like
    settings used before (constant rate, soft target, no Double DQN) had solved 3 of 5.
    Measured on the way (v5b_simd, cap 500 rounds): a constant rate of 2.3e-3 (no Double
    DQN, final epsilon 0.04) solved 0 of 5; decaying to 2e-4 over 150 rounds, with Double
    DQN and final epsilon 0.02, 10 of 10 alternating but 4 of 5 pipelined (1 of 5 with the
    target copied every 512 updates instead of once a round, 4 of 5 with minibatches of
    128); decaying to 5e-5, 10 of 10 alternating and 9 of 10 pipelined; with a 500k buffer
    as well (no transition overwritten within 500 rounds) 10 of 10 both ways.
    """
    version: str = _h("the rung that generates the transitions, e.g. v5b_simd", default="")
    learner: str = _h("the learner rung, e.g. l3_native_update (default: the reference learner)",
                      default="")
    envs: int = _h("N environments per round", default=20)
    steps: int = _h("T steps per round", default=32)
    updates_per_round: int = _h("U gradient updates after each round", default=128)
    lr_end: float = _h("the learning rate decays linearly to this (0: constant)", default=5e-5)
    lr_decay_rounds: int = _h("... over this many rounds", default=150)
    buffer_size: int = _h("replay capacity in transitions", default=500_000)
    n_step: int = _h("bootstrap n steps ahead: the replay stores n-step returns and the update "
                     "discounts by gamma^n (training/nstep.py; 1: LEARNER.md's one-step target)",
                     default=1)
    eps_start: float = _h("epsilon of round 0", default=1.0)
    eps_end: float = _h("final epsilon", default=0.02)
    eps_decay_rounds: int = _h("epsilon decays linearly over this many rounds", default=13)
    max_rounds: int = _h("give up after this many rounds", default=500)
    budget_s: float = _h("give up after this many seconds of training (0: no limit); start-up "
                         "and greedy evaluations do not count", default=0.0)
    threshold: float = _h("solved: mean return of the last `window` episodes, and of the greedy "
                          "evaluation, at least this", default=CARTPOLE.solved_return)
    window: int = _h("episodes in the moving mean", default=100)
    eval_episodes: int = _h("greedy (epsilon 0) episodes in Gymnasium's CartPole-v1 that confirm "
                            "a solve", default=20)
    eval_cooldown: int = _h("rounds between two confirmation attempts", default=5)
    eval_every: int = _h("the practitioner's criterion beside ours: a greedy evaluation every this "
                         "many transitions, at the first round's end past each multiple (0: none)",
                         default=0)
    stop_at: str = _h("stop when solved (our criterion) or at the first periodic evaluation that "
                      "passes (the practitioner's; needs --eval-every)", default="solved",
                      meta={"choices": ("solved", "periodic")})
    pipelined: bool = _h("generate round k+1 while learning on round k (weights one round stale)",
                         default=False)
    actor: str = _h("pipelined actor: a child process (any rung), a thread (overlaps only when "
                    "generate releases the GIL), or auto (= process)", default="auto",
                    meta={"choices": ("auto", "process", "thread")})
    workers: int = _h("the generator's workers / threads / ranks", default=1)

    def check(self) -> "TrainConfig":
        """Raise StudyError naming the first setting out of range."""
        self.check_learn()

        def need(ok, name, rng):
            if not ok:
                raise StudyError(f"--{name.replace('_', '-')} must be {rng}, got {getattr(self, name)!r}")
        for name in ("envs", "steps", "updates_per_round", "lr_decay_rounds", "buffer_size", "n_step",
                     "eps_decay_rounds", "max_rounds", "window", "eval_episodes", "eval_cooldown",
                     "workers"):
            v = getattr(self, name)
            need(isinstance(v, int) and not isinstance(v, bool) and v > 0, name, "a positive integer")
        for name, cap in (("envs", 1 << 20), ("steps", 1 << 20), ("updates_per_round", 1 << 20),
                          ("buffer_size", (1 << 32) - 1), ("max_rounds", 10 ** 7),
                          ("eval_episodes", 10_000), ("workers", 256), ("window", 10 ** 6),
                          ("n_step", 64)):
            need(getattr(self, name) <= cap, name, f"at most {cap}")
        need(_fin(self.lr_end) and 0 <= self.lr_end <= self.lr, "lr_end",
             "a finite number in [0, --lr] (0: constant rate)")
        for name in ("eps_start", "eps_end"):
            need(_fin(getattr(self, name)) and 0 <= getattr(self, name) <= 1, name, "in [0, 1]")
        top = CARTPOLE.max_episode_steps          # the most one episode can return
        need(_fin(self.threshold) and self.threshold <= top, "threshold",
             f"a finite number at most {top} (the most an episode of {CARTPOLE.name} returns)")
        need(_fin(self.budget_s) and 0 <= self.budget_s <= 10 ** 6, "budget_s",
             "a finite number of seconds in [0, 1e6] (0: no limit)")
        need(self.actor in ("auto", "process", "thread"), "actor", "auto, process or thread")
        need(isinstance(self.eval_every, int) and not isinstance(self.eval_every, bool)
             and 0 <= self.eval_every <= 10 ** 9, "eval_every", "an integer in [0, 1e9] (0: none)")
        need(self.stop_at in ("solved", "periodic"), "stop_at", "solved or periodic")
        if self.stop_at == "periodic" and not self.eval_every:
            raise StudyError("--stop-at periodic needs --eval-every > 0 (the evaluations' cadence)")
        if self.n_step > self.steps:
            raise StudyError(f"--n-step {self.n_step} exceeds --steps {self.steps}: a round must "
                             f"complete the windows the round before left open")
        if self.envs * self.steps > self.buffer_size:
            raise StudyError(f"one round (--envs x --steps = {self.envs * self.steps}) does not fit "
                             f"in the replay buffer (--buffer-size {self.buffer_size})")
        if self.batch_size > self.envs * self.steps:
            raise StudyError(f"--batch-size {self.batch_size} exceeds one round of transitions "
                             f"(--envs x --steps = {self.envs * self.steps}); learning starts "
                             f"after round 0")
        return self

    def learning_rate(self, round_index: int) -> float:
        if self.lr_end <= 0:
            return self.lr
        frac = min(1.0, round_index / max(1, self.lr_decay_rounds))
        return self.lr + (self.lr_end - self.lr) * frac

    def learner_config(self) -> "TrainConfig":
        """The config the learner is built with: with n-step returns its discount is gamma^n
        (the rows carry the n-step return; training/nstep.py)."""
        if self.n_step == 1:
            return self
        from dataclasses import replace
        return replace(self, gamma=self.gamma ** self.n_step)


def _fin(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
