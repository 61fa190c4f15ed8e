"""Learner verification (LEARNER.md, "What counts as correct"): every learner against the
reference learner, on the fixed replay buffer, before it is timed."""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Dict, List, Optional

import numpy as np

from core.learner import LOSS_RTOL, TOL_FIRST, TOL_K, LearnConfig, max_diff
from core.evaluate import greedy_actions
from training.fixture import fixed_replay, probe_observations

from core.errors import StudyError
from core.workload import Outcome

SEEDS = (0, 7, 2 ** 64 - 1)
K = 200
TIE_GAP = 1e-3


def run_learner(learner, cfg: LearnConfig, updates: int, checkpoints=()) -> dict:
    """`updates` updates on the fixed replay: {"losses", "weights", "at": {k: weights}}."""
    replay = fixed_replay()
    impl = learner.make(cfg, replay)
    try:
        losses = np.zeros(updates, np.float32)
        at, done = {}, 0
        for c in sorted(set(checkpoints) | {updates}):
            impl.learn(c - done, losses[done:c])
            done = c
            impl.sync()
            at[c] = impl.weights()
        return {"losses": losses, "weights": at[updates], "at": at}
    finally:
        impl.close()


SLACK = 2.0        # a form as accurate as another of the same arithmetic: at most twice its distance


def _build_record(learner) -> dict:
    """The learner's build record, or {} (none, or it cannot be read)."""
    try:
        return (learner.build_info() if learner.build_info else None) or {}
    except Exception:
        return {}


def precision(learner) -> str:
    """"float32", or "bf16" for a learner whose build record says its products take bf16
    operands (LEARNER.md, *bf16*)."""
    return _build_record(learner).get("precision", "float32")


def thread_sums(learner) -> bool:
    """True for a learner whose build record says each thread keeps its own sums ("sums":
    "per thread", L4t): its float32 rounding then depends on its thread count, so it is
    checked at every thread count it is timed or trained at, not at 1 alone."""
    return _build_record(learner).get("sums") == "per thread"


def verify_at(verifier, learner, threads: int, device: str = "cpu"):
    """verifier.verify(learner) with every run of the learner at `threads` threads (the
    reference's runs as always), each outcome's case naming the count: how a thread_sums
    learner is checked at a count it runs at."""
    from dataclasses import replace

    def make(cfg, replay):
        return learner.make(replace(cfg, threads=threads), replay)
    outs = verifier.verify(replace(learner, make=make), device=device)
    return [replace(o, case=f"{o.case}, {threads} threads") for o in outs]


def bf16_products(reference):
    """The reference learner with LEARNER.md's bf16 arithmetic: the products of its hidden
    layer (its forward for either network, both products of its backward) on operands
    rounded to bf16 (torch's round to nearest even), float32 sums; the rest unchanged.
    Its distance from the reference is the bf16 noise a bf16 learner is judged by."""
    import torch

    def bf(t):
        return t.to(torch.bfloat16).to(t.dtype)

    class Products(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, b):
            xb, wb = bf(x), bf(w)
            ctx.save_for_backward(xb, wb)
            return xb @ wb.t() + b

        @staticmethod
        def backward(ctx, gy):
            xb, wb = ctx.saved_tensors
            gb = bf(gy)
            return gb @ wb, gb.t() @ xb, gy.sum(0)

    def make(cfg, replay):
        impl = reference.make(cfg, replay)
        for net in (impl.policy, impl.target):
            lin = net[2]
            lin.forward = lambda x, lin=lin: Products.apply(x, lin.weight, lin.bias)
        return impl
    return replace(reference, make=make, name=f"{reference.name} (bf16 products)")


def emulated_twin(learner):
    """A bf16 learner's twin with its emulated kernel (EMULATED in its learner.py), or None."""
    import importlib
    if precision(learner) != "bf16" or not learner.name:
        return None
    try:
        return getattr(importlib.import_module(f"learners.{learner.name}.learner"), "EMULATED", None)
    except ImportError:
        return None


def has_instruction() -> bool:
    from native.loader import cpu_flags
    return "avx512_bf16" in cpu_flags()


def learner_verifier(workload: str, reference, cfg: Optional[LearnConfig] = None,
                     progress: Callable[[str], None] = None):
    """LEARNER.md's checks of a learner of `workload`, one interface for every workload: an
    object whose verify(learner, device=...) returns [Outcome]. CartPole's are LearnerVerifier
    (below); chess's, ChessLearnerVerifier (versions/chess/common/learn_verify.py). cfg: the
    update to check (a recipe's settings); None: the contract's."""
    if workload == "chess":
        from versions.chess.common.learn_verify import recipe_settings
        from .chess_bf16_verify import ChessBf16Verifier
        return ChessBf16Verifier(reference, bf16_products, precision, progress=progress,
                                 settings=recipe_settings(cfg) if cfg is not None else None)
    if workload != "cartpole":
        raise StudyError(f"no learner checks for workload {workload!r} (harness/learner_verify.py)")
    return LearnerVerifier(reference, cfg=cfg, progress=progress)


class LearnerVerifier:
    def __init__(self, reference, cfg: Optional[LearnConfig] = None, seeds=SEEDS,
                 progress: Callable[[str], None] = None):
        self.reference = reference
        self.cfg = (cfg or LearnConfig()).learn_config()
        self.cfg = replace(self.cfg, device="cpu" if reference.device == "cpu" else self.cfg.device)
        self.seeds = seeds
        self.progress = progress or (lambda s: None)
        self._ref: Dict[int, dict] = {}

    def ref(self, seed: int) -> dict:
        if seed not in self._ref:
            self.progress(f"{self.reference.name}: reference run, seed {seed}")
            self._ref[seed] = run_learner(self.reference, replace(self.cfg, seed=seed), K, (1,))
        return self._ref[seed]

    def tolerances(self, learner, seed: int, ref: dict, probes) -> dict:
        """LEARNER.md's tolerances and what the first update is compared with. For a bf16
        learner (LEARNER.md, *bf16*): its first update against the reference run with bf16
        products (bf16_products: the same arithmetic, so float32's tolerance), and the rest
        against the reference within twice that bf16 run's distance from it, measured here."""
        tol = {"first": TOL_FIRST, "first_ref": ref["at"][1], "k": TOL_K, "loss": LOSS_RTOL,
               "tie": TIE_GAP, "how": "", "how_first": ""}
        if precision(learner) != "bf16":
            return tol
        self.progress(f"{learner.name}: the bf16 noise, seed {seed}")
        noise = run_learner(bf16_products(self.reference), replace(self.cfg, seed=seed), K, (1,))
        rl = np.abs(noise["losses"].astype(np.float64) - ref["losses"]) / np.maximum(np.abs(ref["losses"]), 1e-12)
        q = np.abs(_q(noise["weights"], probes) - _q(ref["weights"], probes))
        tol.update(first_ref=noise["at"][1], how_first=f"; against {self.reference.name} with bf16 products",
                   k=max(TOL_K, SLACK * max_diff(noise["weights"], ref["weights"])),
                   loss=max(LOSS_RTOL, SLACK * float(np.max(rl))), tie=max(TIE_GAP, SLACK * float(q.max())),
                   how=f"; bf16: {SLACK:g}x the distance of {self.reference.name} with bf16 products")
        return tol

    def verify(self, learner, device: Optional[str] = None) -> List[Outcome]:
        """LEARNER.md's checks of `learner` (on `device`, default its own) against the reference."""
        out = []
        probes = probe_observations()
        for seed in self.seeds:
            case = f"seed {seed}"
            self.progress(f"{learner.name}: {case}")
            ref = self.ref(seed)
            tol = self.tolerances(learner, seed, ref, probes)
            cfg = replace(self.cfg, seed=seed, device=device or learner.device)
            try:
                got = run_learner(learner, cfg, K, (1,))
            except Exception as e:
                out.append(Outcome(False, "runs", case, f"{type(e).__name__}: {e}"))
                continue
            bad = [k for k in ref["weights"] if got["weights"].get(k) is None
                   or got["weights"][k].shape != ref["weights"][k].shape]
            if bad:
                out.append(Outcome(False, "shapes", case, f"weights {', '.join(bad)} missing or misshapen"))
                continue
            d1 = max_diff(got["at"][1], tol["first_ref"])
            out.append(Outcome(d1 <= tol["first"], "weights after 1 update", case,
                               f"max |difference| {d1:.3g} (tolerance {tol['first']:.3g}{tol['how_first']})", d1))
            dk = max_diff(got["weights"], ref["weights"])
            out.append(Outcome(dk <= tol["k"], f"weights after {K} updates", case,
                               f"max |difference| {dk:.3g} (tolerance {tol['k']:.3g}{tol['how']})", dk))
            rl = np.abs(got["losses"].astype(np.float64) - ref["losses"]) / np.maximum(np.abs(ref["losses"]), 1e-12)
            worst = int(np.argmax(rl))
            out.append(Outcome(bool(np.all(np.isfinite(got["losses"]))) and rl[worst] <= tol["loss"],
                               f"losses of {K} updates", case,
                               f"worst relative difference {rl[worst]:.3g} at update {worst} "
                               f"(tolerance {tol['loss']:.3g}{tol['how']})", float(rl[worst])))
            twin = emulated_twin(learner)
            if twin is not None and has_instruction():      # elsewhere both are the emulation
                em = run_learner(twin, cfg, K)
                de = max_diff(em["weights"], got["weights"])
                same = de == 0.0 and np.array_equal(em["losses"], got["losses"])
                out.append(Outcome(same, "the emulated kernel equals the instruction", case,
                                   f"{K} updates: max |difference| {de:.3g}, losses "
                                   f"{'equal' if np.array_equal(em['losses'], got['losses']) else 'differ'} "
                                   f"(tolerance: bit for bit)", de))
            qr = _q(ref["weights"], probes)
            clear = np.abs(qr[:, 1] - qr[:, 0]) > tol["tie"]
            ga, gr = greedy_actions(got["weights"], probes), qr.argmax(1)
            wrong = int(np.sum((ga != gr) & clear))
            out.append(Outcome(wrong == 0, "greedy actions on probes", case,
                               f"{wrong} of {int(clear.sum())} clear probes disagree", float(wrong)))
        return out


def worst_by_check(outcomes) -> dict:
    """{check: "case: detail"} of the outcome with the largest value of each check across the
    cases (seeds), the first one on a tie or where a check has no value."""
    out, top = {}, {}
    for o in outcomes:
        v = o.value if o.value is not None else float("-inf")
        if o.check not in top or v > top[o.check]:
            top[o.check], out[o.check] = v, f"{o.case}: {o.detail}"
    return out


def _q(w, obs):
    h = np.maximum(obs @ w["w1"].T + w["b1"], 0)
    h = np.maximum(h @ w["w2"].T + w["b2"], 0)
    return h @ w["w3"].T + w["b3"]
