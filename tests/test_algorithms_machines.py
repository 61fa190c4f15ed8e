"""The algorithm ladder across machines (report/parts/algorithm_stats.py, the rungs' NOTES.md,
the README's sentence) and a search's record of its base."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import ROOT
from tests.helpers import numbers


def test_another_machines_recipes_are_told_apart_by_threads_and_judged_over_their_runs():
    """On another machine each (recipe, learner, threads) is its own line; the time target
    goes to the fastest recipe whose newest run solved every seed, counted over all its runs;
    a thread count with an unsolved seed is not the fastest, however quick its median."""
    from report.parts.algorithms_elsewhere import groups, targets, stats

    def run(alg, threads, rid, times, flops, solved=5):
        return [{"algorithm": alg, "number": alg[1], "learner": "l4b", "threads": threads,
                 "run_id": rid, "seed": 100 + i, "solved": i < solved, "wall_s": t, "budget_s": 30,
                 "updates": 10, "transitions": 10, "flops": flops} for i, t in enumerate(times)]

    rows = (run("a1_dqn_defaults", 2, "R1", [3.0] * 5, 100.0) + run("a5_searched", 2, "R0", [0.45] * 5, 9.0)
            + run("a5_searched", 2, "R1", [0.6] * 5, 9.0) + run("a5_searched", 1, "R1", [0.3] * 5, 9.0, solved=4))

    class Other:
        def rows(self, kind):
            return rows
    g = groups(Other())
    assert list(g) == [("a1_dqn_defaults", "l4b", 2), ("a5_searched", "l4b", 2), ("a5_searched", "l4b", 1)]
    assert list(g[("a5_searched", "l4b", 2)]) == ["R0", "R1"]
    newest = {k: stats(list(v.values())[-1]) for k, v in g.items()}
    text = targets(g, newest, "avx512", "")
    assert "`a5_searched` with `l4b` at 2 thread(s)" in text
    assert "met in 1 of its 2 runs, so not robustly" in text
    assert "needs 11.1x fewer there, **met**" in text
    rows[:] = [r for r in rows if not (r["algorithm"] == "a5_searched" and r["threads"] == 2)]
    g = groups(Other())
    text = targets(g, {k: stats(list(v.values())[-1]) for k, v in g.items()}, "avx512", "")
    assert "`a1_dqn_defaults`" in text and "**not met**" in text


def _write_machine(root, machine, throughput, rows):
    d = root / machine
    d.mkdir(parents=True)
    (d / "machine.json").write_text(json.dumps({"id": machine, "cpu": f"CPU {machine}", "cores": 2,
                                                "simd": ["avx2"]}))
    if throughput:
        (d / "throughput.jsonl").write_text(json.dumps({"kind": "throughput", "run_id": "R0", "time": "2026-01-02T00:00:00+0000", "provenance": {}}) + "\n")
    (d / "algorithm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _recipe_run(name, rid, times, solved=5, flops=5.0):
    return [{"kind": "algorithm", "algorithm": name, "number": name[1], "learner": "l4b", "threads": 2,
             "version": "v5c", "run_id": rid, "seed": 100 + i, "solved": i < solved, "wall_s": t,
             "budget_s": 30, "updates": 10, "transitions": 10, "flops": flops, "base": "", "title": "t",
             "time": "2026-01-01T00:00:00+0000", "learner_check": {"status": "passed"}, "provenance": {}}
            for i, t in enumerate(times)]


def test_a_rungs_notes_name_the_machines_that_measured_it(tmp_path):
    """A rung's NOTES block gives its rows on the report's machine and a line per other
    machine that trained it; a rung only another machine trained says so, never 'no rows'."""
    from report.context import Context
    from report.notes import algorithm_block

    def write(machine, throughput, rows):
        _write_machine(tmp_path / "res", machine, throughput, rows)
    run = _recipe_run
    timed = run("a1_dqn_defaults", "R1", [3.0] * 5)
    for r in timed:
        r.update(learn_s=1.5, store_s=0.9, wait_s=0.3, push_s=0.3)
    write("main-box", True, timed)
    write("other-box", False, run("a1_dqn_defaults", "R2", [2.0] * 5) + run("a5b_searched_wider", "R2", [0.3] * 5)
          + run("a5b_searched_wider", "R3", [0.2, 0.25, 0.3, 0.35, 9.0], solved=4))
    ctx = Context(results_dir=tmp_path / "res", report_dir=tmp_path / "rep")
    assert ctx.machine == "main-box"
    text = algorithm_block(ctx, "a5b_searched_wider")
    assert text.startswith("Not measured on CPU main-box")
    (line,) = [x for x in text.splitlines() if x.startswith("- on ")]
    assert "results/other-box/, run R3" in line and "solved 4/5" in line     # the newest run only
    assert "not solved in 30 s (seed 104)" in line
    text = algorithm_block(ctx, "a1_dqn_defaults")
    assert text.startswith("Measured in the report's run on CPU main-box")
    assert "On other machines:" in text and "results/other-box/, run R2" in text
    # the loop's timers over the wall-clock (3 s a seed): learn, store, wait, push, in %
    assert [100 * s / 3.0 for s in (1.5, 0.9, 0.3, 0.3)] in [numbers(x) for x in text.splitlines()]
    assert "its training time" not in line                 # rows without the loop's timers
    assert algorithm_block(ctx, "a3_nstep") is None


def test_the_readme_sentence_adds_the_fastest_recipe_of_another_machine(tmp_path):
    """The headline names the fastest complete recipe of another machine against a1 there
    (same learner and threads); a recipe with an unsolved seed is not it, however quick."""
    from report.context import Context
    from report.sections.algorithms import elsewhere_headline
    res = tmp_path / "res"
    _write_machine(res, "main-box", True, _recipe_run("a1_dqn_defaults", "R1", [3.0] * 5))
    _write_machine(res, "fast-box", False, _recipe_run("a1_dqn_defaults", "R2", [2.0] * 5, flops=100.0)
                   + _recipe_run("a5_searched", "R2", [0.4] * 5, flops=10.0)
                   + _recipe_run("a5b_searched_wider", "R2", [0.1] * 5, solved=4, flops=1.0))
    ctx = Context(results_dir=res, report_dir=tmp_path / "rep")
    text = elsewhere_headline(ctx)
    assert "fast-box" in text and "`a5_searched` with `l4b`" in text
    # cores, threads; a5's median, IQR, solved/seeds, slowest (seed 100); a1's median there;
    # a1's FLOPs to solved over a5's
    assert numbers(text) == [2, 2, 0.4, 0.4, 0.4, 5, 5, 0.4, 100, 2, 100.0 / 10.0]
    _write_machine(res, "empty-box", False, _recipe_run("a1_dqn_defaults", "R3", [1.0] * 5, solved=4))
    assert elsewhere_headline(ctx) == text


def test_the_fastest_recipe_is_set_against_the_machines_fma_peak():
    """FLOPs to solved over the FMA peak measured at the recipe's thread count: the floor,
    and the measured time as a multiple of it; nothing without a peak for those threads."""
    from report.parts.algorithms_elsewhere import fma_roof, stats
    rows = _recipe_run("a5b_searched_wider", "R1", [0.2] * 5, flops=2e9)

    class Other:
        def __init__(self, peaks):
            self.peaks = peaks

        def rows(self, kind):
            return [{"ceiling": "fma_f32", "threads": t, "value": v, "run_id": "C1"} for t, v in self.peaks]
    newest = {("a5b_searched_wider", "l4b", 2): stats(rows)}
    text = fma_roof(Other([(1, 100.0), (2, 200.0)]), newest)
    floor_s = 2e9 / 200e9                               # the median FLOPs at the 2-thread peak
    assert numbers(text) == [2, 200, floor_s * 1e3, 0.2 / floor_s]
    for r in rows:
        r["learn_s"] = 0.1                               # 2 GFLOP in 0.1 s: 20 GFLOP/s
    text = fma_roof(Other([(2, 200.0)]), {("a5b_searched_wider", "l4b", 2): stats(rows)})
    assert numbers(text)[4:] == [2e9 / 0.1 / 1e9, 100 * (2e9 / 0.1) / 200e9]    # GFLOP/s, % of peak
    assert fma_roof(Other([(1, 100.0)]), newest) == ""


def test_a_search_from_a5_records_its_base_and_space(tmp_path):
    """`--search --base a5_searched` starts from a5's settings in a5's own space and records
    both in every trial row (a budget too short to solve: no trial is selected, exit 1)."""
    from harness.cmd_algorithms import SEARCH_SPACES
    env = dict(os.environ, STUDY_RESULTS_DIR=str(tmp_path))
    p = subprocess.run([sys.executable, "-m", "harness", "algorithms", "--search", "--base", "a5_searched",
                        "--trials", "1", "--budget", "0.3", "--version", "v1b_numpy",
                        "--learner", "l3_native_update"], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 1 and "no trial solved both seeds" in p.stdout, p.stderr[-2000:]
    (path,) = tmp_path.glob("*/algorithm_trials.jsonl")
    row, last = [json.loads(x) for x in path.read_text().splitlines()]    # the trial, the selection
    assert last["selection"] and not last["selected"] and last["counts"]["counted"] == 1
    assert row["study"] == last["study"] and row["study"]["storage"].endswith("studies/algorithms-a5_searched.db")
    assert row["base"] == "a5_searched" and row["space"] == json.loads(json.dumps(SEARCH_SPACES["a5_searched"]))
    space = SEARCH_SPACES["a5_searched"]
    assert all(row["params"][k] in v for k, v in space.items() if v[0] != "log")
    assert space["lr"][1] <= row["params"]["lr"] <= space["lr"][2]
