"""LEARNER.md's chess checks of a bf16 learner (L4w: layer 2's products on bf16 operands),
the chess counterpart of CartPole's *bf16* checks in harness/learner_verify.py.

ChessBf16Verifier is versions/chess/common/learn_verify.py's ChessLearnerVerifier, with one
change for a learner whose build record says "precision": "bf16" (every other learner is
checked as there):
  - its first update at the K checks' minibatch (the contract's 64) against the reference with
    bf16 products (bf16_products): the same arithmetic, so TOL_FIRST, as for CartPole;
  - at a recipe's larger minibatch, its first update there against the nearer of that
    reference's float32 and float64 forms, within SLACK times how far apart those two forms
    end (the largest over the check's seeds and NOISE_SEEDS), at least TOL_FIRST. At thousands
    of rows a bf16 operand sometimes sits at a rounding boundary that one float32 ulp decides,
    and AdamW's first step (lr g / (|g| + eps)) turns the difference into up to lr on a weight
    whose gradient is near eps: at a14's update (B 2,048) the reference's own two forms ended
    up to about 1e-4 apart on those seeds, where at 64 rows they agree within about 3e-8;
  - after K updates, weights, losses and greedy actions against L1's forms, within SLACK
    times the distance of the reference with bf16 products from its nearest form (the probes'
    tie gap likewise), each at least the contract's.
The verifier lives here rather than beside ChessLearnerVerifier so that adding it changes no
code that a recorded row ran (docs/CODE_HASH.md: harness/ is never hashed)."""
from __future__ import annotations

from typing import List

import numpy as np

from core.learner import TOL_FIRST, max_diff
from core.workload import Outcome
from versions.chess.common import learn_verify as lv

SLACK = 2.0                          # LEARNER.md, *bf16*: twice the bf16 reference's distance
NOISE_SEEDS = (1, 2, 3, 4, 5, 6)     # further seeds for the first update's noise at a large minibatch


def probe_q(weights: dict) -> tuple:
    """(Q on the probe positions, their legal masks): greedy_check's positions."""
    from versions.chess.common.encoding import mask_bool, obs_inputs
    from versions.chess.common.net import q_values
    u = lv.learn.fixed_replay().data.view(np.uint64)
    legal = mask_bool(u[:, lv.learn.NEXT_MASK])
    rows = np.flatnonzero(legal.any(1))[:lv.PROBES]
    x = obs_inputs(u[rows, lv.learn.NEXT_OBS])
    return q_values({k: v.astype(np.float32) for k, v in weights.items()}, x), legal[rows]


def greedy_within(got: dict, ref: dict, case: str, tie: float) -> Outcome:
    """lv.greedy_check with a measured tie gap: the greedy actions equal the form's, or a near
    tie within `tie` in the form's Q."""
    from versions.chess.common.net import greedy
    qr, legal = probe_q(ref)
    qg, _ = probe_q(got)
    ag, ar = greedy(qg, legal), greedy(qr, legal)
    i = np.arange(len(ar))
    differ = ag != ar
    bad = int((differ & (qr[i, ar] - qr[i, ag] > tie)).sum())
    return Outcome(bad == 0, f"greedy actions after {lv.K} updates", case,
                   f"{int(differ.sum())} of {len(ar)} probe positions differ, {bad} by more than a "
                   f"near tie ({tie:.3g} in the form's Q; bf16: {SLACK:g}x the bf16 reference's largest gap)")


class ChessBf16Verifier(lv.ChessLearnerVerifier):
    """ChessLearnerVerifier with the bf16 checks of the module's docstring. bf16(reference): the
    reference with bf16 products; precision(learner): "bf16" for a learner checked by them."""

    def __init__(self, reference, bf16, precision, **kw):
        super().__init__(reference, **kw)
        self.bf16, self.precision = bf16, precision

    def bf16_ref(self, seed: int) -> dict:
        """The reference with bf16 products: its K updates at the K checks' minibatch ("k"), and
        where a recipe's minibatch differs, its first update there in float32 and float64."""
        if (seed, "bf16") not in self._ref:
            self.progress(f"{self.reference.name}: the bf16 noise, seed {seed}")
            ref = self.bf16(self.reference)
            out = {"k": lv.run(ref, self.k_config(seed=seed, device="cpu"), lv.K)}
            if self.first_differs():
                cfg = self.config(seed=seed, device="cpu")
                out.update(first=lv.run(ref, cfg, 1), first64=lv.run(lv._Form(ref, "float64"), cfg, 1))
            self._ref[seed, "bf16"] = out
        return self._ref[seed, "bf16"]

    def first_tolerance(self) -> float:
        """The recipe minibatch's first-update tolerance (module docstring)."""
        if "bf16 first" not in self._ref:
            ref, far = self.bf16(self.reference), 0.0
            for seed in tuple(self.seeds) + NOISE_SEEDS:
                if seed in self.seeds:
                    a, b = self.bf16_ref(seed)["first"], self.bf16_ref(seed)["first64"]
                else:
                    cfg = self.config(seed=seed, device="cpu")
                    a, b = lv.run(ref, cfg, 1), lv.run(lv._Form(ref, "float64"), cfg, 1)
                far = max(far, max_diff(a["first"], b["first"]))
            self._ref["bf16 first"] = max(TOL_FIRST, SLACK * far)
        return self._ref["bf16 first"]

    def k_tolerances(self) -> tuple:
        """(displacement, loss, tie) after K updates: SLACK times the bf16 reference's distance
        from its nearest form, the largest over the seeds, each at least the contract's (and at
        a recipe's update at least the spread of L1's own forms, as ChessLearnerVerifier's)."""
        from versions.chess.common.replay import TIE_TOL
        disp, loss, tie = lv.DISPLACEMENT_RTOL, lv.LOSS_RTOL, TIE_TOL
        for seed in self.seeds:
            got, forms = self.bf16_ref(seed)["k"], self.forms(seed)
            form, rd, rl = lv.nearest_form(got, forms)
            qa, legal = probe_q(got["weights"])
            qb, _ = probe_q(forms[form]["weights"])
            disp, loss = max(disp, SLACK * rd), max(loss, SLACK * rl)
            tie = max(tie, SLACK * float(np.abs(qa - qb)[legal].max()))
        if self.settings:
            sp = lv.spread({s: self.forms(s) for s in self.seeds})
            disp, loss = max(disp, sp[0]), max(loss, sp[1])
        return disp, loss, tie

    def verify(self, learner, device=None) -> List[Outcome]:
        if self.precision(learner) != "bf16" or learner.name == self.reference.name:
            return super().verify(learner, device=device)
        device = device or learner.device
        name, out = self.reference.name, [lv.rows_check()]
        disp, loss, tie = self.k_tolerances()
        for seed in self.seeds:
            case = f"seed {seed}"
            self.progress(f"{learner.name} ({device}): chess, {case}, bf16")
            try:
                got = lv.run(learner, self.k_config(seed=seed, device=device), lv.K)
                first = lv.run(learner, self.config(seed=seed, device=device), 1) if self.first_differs() else got
            except Exception as e:
                out.append(Outcome(False, "runs", case, f"{type(e).__name__}: {e}"))
                continue
            ref = self.bf16_ref(seed)
            small = f"{case}, minibatch {lv.K_BATCH}" if self.first_differs() else case
            d1 = max_diff(got["first"], ref["k"]["first"])
            out.append(Outcome(d1 <= TOL_FIRST, "weights after 1 update", small,
                               f"max |difference| {d1:.3g} (tolerance {TOL_FIRST:g}; against {name} "
                               f"with bf16 products)"))
            if self.first_differs():
                tol = self.first_tolerance()
                d = min(max_diff(first["first"], ref[f]["first"]) for f in ("first", "first64"))
                seeds = ", ".join(map(str, tuple(self.seeds) + NOISE_SEEDS))
                out.append(Outcome(d <= tol, "weights after 1 update", case,
                                   f"max |difference| {d:.3g} from the nearer of {name}'s float32 and "
                                   f"float64 forms with bf16 products (tolerance {tol:.3g}: {SLACK:g}x the "
                                   f"farthest those two forms were apart, seeds {seeds})"))
            forms = self.forms(seed)
            checks = lv.k_update_checks(got, forms, small, tol=(disp, loss),
                                        why=f"; bf16: {SLACK:g}x the distance of {name} with bf16 products")
            form, _, _ = lv.nearest_form(got, forms)
            out += checks[:2] + [greedy_within(got["weights"], forms[form]["weights"], small, tie)]
        return out
