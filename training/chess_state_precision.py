"""Whether AdamW's state may move fewer bytes: the reference learner (L1) with m, v or both
kept in bfloat16, judged by LEARNER.md's chess checks.

    python -m training.chess_state_precision [--state m,v,m+v] [--record]

An exact lazy AdamW (L4e, L4j) still reads and writes theta, m and v of every row an update
uses, 24 bytes a parameter (learners/l4e_lazy_adamw/floor.py). m and v in bfloat16 would move
16. Whether a learner may store them so is what LEARNER.md's chess checks say: this runs L1
with the named state rounded to bfloat16 (round to nearest even, torch's conversion) after
every AdamW step, as a learner that stores it in 2 bytes would keep it, from the checks'
seeds, on their fixture, and compares it as `harness learners --workload chess` compares a
learner: its first update with L1's (max abs 1e-5), its 50 updates with the nearest of L1's
three forms (displacement and losses, 1e-3). --record appends a row per state and seed (kind
chess_state_precision), which the report's chess learner section quotes."""
from __future__ import annotations

import argparse
import sys

STATES = {"m": ("exp_avg",), "v": ("exp_avg_sq",), "m+v": ("exp_avg", "exp_avg_sq")}
REFERENCE = "l1_torch_eager"
SOURCES = ("training/chess_state_precision.py", "learners/l1_torch_eager", "versions/chess/common/learn.py",
           "versions/chess/common/learn_verify.py", "versions/chess/common/net.py")


class Bf16State:
    """L1 (the `reference` learner) whose AdamW state `keys` is rounded to bfloat16 after
    every step: what a learner storing it in 2 bytes a value would keep."""

    def __init__(self, reference, state: str):
        self.reference, self.keys = reference, STATES[state]
        self.name = f"{reference.name} with {state} in bfloat16"

    def make(self, cfg, replay):
        impl = self.reference.make(cfg, replay)
        torch, opt, step = impl.torch, impl.opt, impl.step_fn

        def step_bf16():
            step()
            with torch.no_grad():
                for p in impl._pp:
                    for k in self.keys:
                        s = opt.state[p][k]
                        s.copy_(s.to(torch.bfloat16).float())
        impl.step_fn = step_bf16
        return impl


def measure(states, progress=print) -> list:
    """A dict per state and seed: the first update's and the 50 updates' distances from L1."""
    from core.discover import get_learner
    from versions.chess.common import learn_verify as lv
    ref = get_learner(REFERENCE)
    why = ref.unavailable_reason()
    if why:
        raise RuntimeError(f"{REFERENCE}: {why}")
    ver = lv.ChessLearnerVerifier(ref, progress=progress)
    out = []
    for state in states:
        for seed in lv.SEEDS:
            progress(f"m/v precision: {state} in bfloat16, seed {seed}")
            got = lv.run(Bf16State(ref, state), ver.k_config(seed=seed, device="cpu"), lv.K)
            first = lv.max_diff(got["first"], ver.first_ref(seed)["first"])
            form, disp, loss = lv.nearest_form(got, ver.forms(seed))
            ok = first <= lv.TOL_FIRST and disp <= lv.DISPLACEMENT_RTOL and loss <= lv.LOSS_RTOL
            out.append({"state": state, "precision": "bf16", "seed": seed, "first_update_diff": first,
                        "displacement_diff": disp, "loss_rel_diff": loss, "nearest_form": form,
                        "tolerances": {"first": lv.TOL_FIRST, "displacement": lv.DISPLACEMENT_RTOL,
                                       "losses": lv.LOSS_RTOL},
                        "updates": lv.K, "passes": bool(ok),
                        "bytes_per_param": 2 * (4 + sum(2 if x in state else 4 for x in ("m", "v")))})
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.chess_state_precision",
                                description=__doc__.split("\n")[0])

    def refuse(message):                                     # one line, exit 2, before any work
        print(f"state precision: {message}", file=sys.stderr)
        sys.exit(2)
    p.error = refuse
    p.add_argument("--state", default="m,v,m+v", help=f"comma-separated, of {', '.join(STATES)}")
    p.add_argument("--record", action="store_true", help="append a chess_state_precision row per state and seed")
    a = p.parse_args(argv)
    states = [s for s in a.state.split(",") if s]
    bad = [s for s in states if s not in STATES]
    if bad or not states or len(set(states)) != len(states):
        refuse(f"--state must name distinct states of {', '.join(STATES)}, got {a.state!r}")
    try:
        rows = measure(states, progress=lambda s: print(s, file=sys.stderr, flush=True))
    except Exception as e:                                    # no reference learner here
        print(f"state precision: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}",
              file=sys.stderr)
        return 1
    print("| bfloat16 | seed | bytes a parameter | first update | 50 updates: displacement | losses | passes |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['state']} | {r['seed']} | {r['bytes_per_param']} | {r['first_update_diff']:.2g} | "
              f"{r['displacement_diff']:.3g} | {r['loss_rel_diff']:.3g} | {'yes' if r['passes'] else 'no'} |")
    if a.record:
        from core import results
        for r in rows:
            results.append("chess_state_precision", {"workload": "chess", "reference": REFERENCE, **r,
                                                     "sources": list(SOURCES)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
