"""CartPole's verification: the three checks of versions/cartpole/WORKLOAD.md "What counts as
correct" (the workload's make_verifier; the harness finds it through harness/verify.py).

1. Gymnasium: every transition is replayed in Gymnasium's own CartPole-v1 (its
   CartPoleEnv under its TimeLimit), starting each episode from the contract's reset
   state and stepping with the recorded action; next_obs, reward, terminated and
   truncated must match (observations within 1e-5), and obs must be the state the
   step started from. The actions themselves are checked against the policy: the
   counter-based random action, or, in egreedy mode, the explore draw and the argmax of a
   float64 NumPy evaluation of the Q-network (either action accepted at a near tie).
2. Against the baseline rung (v1): same seed, shape and number of calls give the same
   batch (obs within 1e-5, other arrays equal). In egreedy mode an environment may leave its trajectory
   only at a near tie (|Q0 - Q1| < 1e-4); from there on it is covered by check 1 alone.
3. Workers: splitting the environments over any number of workers gives the same batch
   (same comparison as check 2).
"""
from __future__ import annotations

import warnings
from typing import Callable, Dict, List, Optional

import numpy as np

from core import rng
from core.batches import run_batches
from core.api import GenConfig, StudyError, balancing_weights, check_weights
from core.spec import BATCH, CARTPOLE
from core.verify_case import Case
from core.workload import Outcome

ARRAY_NAMES = BATCH.names

OBS_TOL = 1e-5
TIE_TOL = 1e-4


DEFAULT_CASES = [
    Case("random N=7 seed=0", 7, 32, 3, 0, "random"),
    Case("random N=20 seed=12345", 20, 32, 2, 12345, "random"),
    Case("egreedy N=7 seed=3", 7, 32, 3, 3, "egreedy", epsilon=0.2),
    Case("egreedy N=5 truncation", 5, 200, 3, 7, "egreedy", epsilon=0.02, weights=balancing_weights),
]


def run_generator(make, cfg: GenConfig, steps: int, calls: int) -> Dict[str, np.ndarray]:
    """calls x generate(steps) (core.batches.run_batches), concatenated along time."""
    parts = run_batches(make, cfg, steps, calls)
    return {k: np.concatenate([p[k] for p in parts]) for k in ARRAY_NAMES}


def check_layout(batch, T, N) -> Optional[str]:
    return BATCH.check(batch, T, N)


def q_values64(weights, obs):
    """Float64 Q-values for observations [..., 4]."""
    w = {k: v.astype(np.float64) for k, v in weights.items()}
    h = np.maximum(obs.astype(np.float64) @ w["w1"].T + w["b1"], 0)
    h = np.maximum(h @ w["w2"].T + w["b2"], 0)
    return h @ w["w3"].T + w["b3"]


def check_gymnasium(batch, cfg: GenConfig) -> Optional[str]:
    """Check 1; returns None when every transition agrees, else the first disagreement."""
    import gymnasium as gym
    T, N = batch["action"].shape
    err = check_layout(batch, T, N)
    if err:
        return err
    if not np.all(batch["reward"] == 1.0):
        return "reward is not 1.0 everywhere"
    weights = check_weights(cfg.resolved_weights()) if cfg.policy == "egreedy" else None
    q = q_values64(weights, batch["obs"]) if weights is not None else None
    env = gym.make(CARTPOLE.name, disable_env_checker=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(N):
            k_reset = rng.key(cfg.seed, rng.RESET, i)
            k_act = rng.key(cfg.seed, rng.ACTION, i)
            k_exp = rng.key(cfg.seed, rng.EXPLORE, i)
            episode = 0

            def start(ep):
                env.reset(seed=0)
                s = np.array(rng.reset_state(k_reset, ep), dtype=np.float64)
                env.unwrapped.state = s
                return s.astype(np.float32)

            cur = start(0)
            for t in range(T):
                where = f"env {i}, step {t}"
                if not np.allclose(batch["obs"][t, i], cur, atol=OBS_TOL, rtol=0):
                    return f"{where}: obs {batch['obs'][t, i]} is not the state the step starts from {cur}"
                a = int(batch["action"][t, i])
                if a not in (0, 1):
                    return f"{where}: action {a} is not 0 or 1"
                rand_a = rng.random_action(k_act, t)
                if cfg.policy == "random" or rng.explores(k_exp, t, cfg.epsilon):
                    if a != rand_a:
                        return f"{where}: action {a}, the counter-based random action is {rand_a}"
                else:
                    q0, q1 = q[t, i]
                    greedy = 1 if q1 > q0 else 0
                    if a != greedy and abs(q1 - q0) >= TIE_TOL:
                        return f"{where}: action {a} is not greedy (Q = {q0:.6f}, {q1:.6f})"
                nobs, r, term, trunc, _ = env.step(a)
                if not np.allclose(batch["next_obs"][t, i], nobs, atol=OBS_TOL, rtol=0):
                    return f"{where}: next_obs {batch['next_obs'][t, i]} != Gymnasium {nobs}"
                if float(r) != float(batch["reward"][t, i]):
                    return f"{where}: reward {batch['reward'][t, i]} != Gymnasium {r}"
                if bool(term) != bool(batch["terminated"][t, i]):
                    return f"{where}: terminated {batch['terminated'][t, i]} != Gymnasium {term}"
                if bool(trunc) != bool(batch["truncated"][t, i]):
                    return f"{where}: truncated {batch['truncated'][t, i]} != Gymnasium {trunc}"
                if term or trunc:
                    episode += 1
                    cur = start(episode)
                else:
                    cur = nobs
    env.close()
    return None


def compare_batches(got, ref, cfg: GenConfig) -> Optional[str]:
    """Checks 2 and 3: `got` equals `ref` (ties aside in egreedy mode)."""
    T, N = ref["action"].shape
    err = check_layout(got, T, N)
    if err:
        return err
    if cfg.policy == "random":
        first = np.full(N, T)
    else:
        w = check_weights(cfg.resolved_weights())
        first = np.full(N, T)
        diff = got["action"] != ref["action"]
        for i in np.nonzero(diff.any(axis=0))[0]:
            t = int(np.argmax(diff[:, i]))
            q0, q1 = q_values64(w, ref["obs"][t, i])
            if abs(q1 - q0) >= TIE_TOL:
                return (f"env {i}, step {t}: action {got['action'][t, i]} != reference "
                        f"{ref['action'][t, i]} and Q = ({q0:.6f}, {q1:.6f}) is no tie")
            first[i] = t
    for i in range(N):
        te = first[i]
        if te == 0:
            continue
        for k in ARRAY_NAMES:
            g, r = got[k][:te, i], ref[k][:te, i]
            same = (np.allclose(g, r, atol=OBS_TOL, rtol=0) if k in ("obs", "next_obs")
                    else np.array_equal(g, r))
            if not same:
                bad = np.nonzero(~np.isclose(g, r, atol=OBS_TOL, rtol=0)
                                 if g.dtype == np.float32 else g != r)[0]
                t = int(bad[0]) if len(bad) else 0
                return f"{k} differs at env {i}, step {t}: {g[t]} vs {r[t]}"
    return None


class Verifier:
    """Runs the checks for rungs, caching the baseline rung's reference batches."""

    def __init__(self, cases: List[Case] = None, progress: Callable[[str], None] = None,
                 baseline=None):
        self.cases = cases or DEFAULT_CASES
        self.progress = progress or (lambda s: None)
        self._ref: Dict[str, Dict[str, np.ndarray]] = {}
        self._baseline = baseline

    @property
    def baseline(self):
        if self._baseline is None:
            from core.discover import baseline_rung
            self._baseline = baseline_rung()
        return self._baseline

    def reference(self, case: Case):
        if case.label not in self._ref:
            self._ref[case.label] = run_generator(self.baseline.make_generator, case.config(),
                                                  case.steps, case.calls)
        return self._ref[case.label]

    def worker_counts(self, version) -> List[int]:
        return list(version.verify_worker_counts())

    def verify(self, version) -> List[Outcome]:
        outcomes = []
        make = version.make_generator
        for case in self.cases:
            self.progress(f"{version.name}: {case.label}")
            batches = {}
            for w in self.worker_counts(version):
                try:
                    batches[w] = run_generator(make, case.config(w), case.steps, case.calls)
                except StudyError:
                    raise
                except Exception as e:
                    outcomes.append(Outcome(False, "runs", case.label,
                                            f"workers={w}: {type(e).__name__}: {e}"))
            if 1 not in batches and batches:
                batches[1] = next(iter(batches.values()))
            if 1 not in batches:
                continue
            base = batches[1]
            cfg = case.config()
            err = check_gymnasium(base, cfg)
            outcomes.append(Outcome(err is None, "gymnasium", case.label, err or ""))
            if not version.baseline:
                err = compare_batches(base, self.reference(case), cfg)
                outcomes.append(Outcome(err is None, f"equals {self.baseline.name}", case.label,
                                        err or ""))
            for w, b in batches.items():
                if w != 1:
                    err = compare_batches(b, base, cfg)
                    outcomes.append(Outcome(err is None, f"workers={w} equals workers=1",
                                            case.label, err or ""))
        return outcomes
