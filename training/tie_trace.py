"""Where a chess learner leaves the reference, update by update (the ReLU ties of
learn_verify.py's ChessLearnerVerifier, at a recipe's update):

    python -m training.tie_trace RECIPE [--seed S] [--learner NAME] [--updates K]
        [--batch-size B]

Runs the learner and L1's three forms (learn_verify.REFERENCE_FORMS) one update at a time at
the recipe's settings (its own minibatch unless --batch-size) and prints, per update, each
one's displacement from L1 as timed (learn_verify.displacement_diff). At the first update
where the learner jumps away (its displacement grows 50-fold in one update), it prints the
minibatch's ReLU input nearest zero under L1's weights before that update, in float64: an
input within float32 rounding of zero is a tie that two evaluation orders may send down
different branches. Writes nothing to results/."""
from __future__ import annotations

import argparse

import numpy as np


def trace(recipe: str, seed: int, learner: str, updates: int, batch_size=None, out=print) -> dict:
    from core import discover
    from . import chess_algorithm as calg
    from .chess import ChessTrainConfig
    from versions.chess.common import learn, learn_verify as lv
    from versions.chess.common.encoding import obs_inputs
    from versions.chess.common.net import init_weights
    lc = ChessTrainConfig(**calg.settings(recipe)).learner_config()
    settings = lv.recipe_settings(lc)
    if batch_size:
        settings["batch_size"] = batch_size
    cfg = lv.chess_config(**{**settings, "seed": seed, "device": "cpu"})
    ref = discover.reference_learner()
    parts = {"L1": ref, **{f: lv._Form(ref, f) for f in lv.REFERENCE_FORMS[1:]},
             learner: discover.runnable_learner(learner)}
    ws = {}
    for name, part in parts.items():
        impl = part.make(cfg, learn.fixed_replay())
        try:
            ws[name] = []
            for _ in range(updates):
                impl.learn(1)
                impl.sync()
                ws[name].append(impl.weights())
        finally:
            impl.close()
    init = init_weights(cfg.seed, cfg.hidden)
    disp = {n: [lv.displacement_diff(w, ws["L1"][k], init) for k, w in enumerate(ws[n])] for n in parts if n != "L1"}
    for k in range(updates):
        out(f"update {k + 1:3d}: " + "  ".join(f"{n} {disp[n][k]:.3g}" for n in disp))
    jump = next((k for k in range(1, updates) if disp[learner][k] > 50 * max(disp[learner][k - 1], 1e-12)), None)
    found = {"displacement": disp, "jump": None if jump is None else jump + 1}
    if jump is not None:
        w = {k: v.astype(np.float64) for k, v in ws["L1"][jump - 1].items()}
        u = learn.fixed_replay().data[learn.fixed_replay().indices(cfg.seed, jump, 1, cfg.batch_size)[0]].view(np.uint64)
        z1 = obs_inputs(u[:, learn.OBS]).astype(np.float64) @ w["w1"].T + w["b1"]
        z2 = np.maximum(z1, 0) @ w["w2"].T + w["b2"]
        (layer, z) = min((("1", z1), ("2", z2)), key=lambda t: np.abs(t[1]).min())
        row, unit = np.unravel_index(np.abs(z).argmin(), z.shape)
        found["tie"] = float(z[row, unit])
        out(f"{learner} leaves L1 at update {jump + 1}: the minibatch's ReLU input nearest zero under "
            f"L1's weights before it is layer {layer}, row {row}, unit {unit}: {z[row, unit]:.3g} (float64)")
    return found


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, prog="python -m training.tie_trace", description=__doc__.split("\n\n")[0])
    ap.add_argument("recipe")
    ap.add_argument("--seed", type=int, default=2 ** 64 - 1)
    ap.add_argument("--learner", default="l4c_native_chess")
    ap.add_argument("--updates", type=int, default=50)
    ap.add_argument("--batch-size", type=int)
    a = ap.parse_args(argv)
    from core.errors import StudyError
    try:
        trace(a.recipe, a.seed, a.learner, a.updates, a.batch_size)
    except StudyError as e:
        print(f"error: {e}")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
