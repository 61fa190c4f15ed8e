"""The algorithm ladder (algorithms/ALGORITHM.md): n-step rows, the recipes, the command."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from training import algorithm as alg
from core.errors import StudyError
from tests.conftest import ROOT
from tests.helpers import numbers
from training.config import TrainConfig
from training.nstep import NStepReturns, nstep_reference


def _rounds(seed, T=8, N=5, k=4, p_term=0.1, p_trunc=0.05):
    rng = np.random.default_rng(seed)
    return [{"obs": rng.normal(size=(T, N, 4)).astype(np.float32),
             "next_obs": rng.normal(size=(T, N, 4)).astype(np.float32),
             "action": rng.integers(0, 2, (T, N)).astype(np.int32),
             "reward": rng.normal(size=(T, N)).astype(np.float32),
             "terminated": rng.random((T, N)) < p_term,
             "truncated": rng.random((T, N)) < p_trunc} for _ in range(k)]


def _stored(ns, rounds):
    out = []
    for b in rounds:
        o = ns(b)
        m = o["obs"].shape[0] * o["obs"].shape[1]
        f = {k: v.reshape((m,) + v.shape[2:]) for k, v in o.items()}
        out += [(f["obs"][j], int(f["action"][j]), float(f["reward"][j]), f["next_obs"][j],
                 bool(f["terminated"][j])) for j in range(m)]
    return out


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("seed", [0, 1])
def test_nstep_rows_match_the_one_step_at_a_time_reference(n, seed):
    rounds = _rounds(seed)
    got, ref = _stored(NStepReturns(n, 0.9), rounds), nstep_reference(rounds, n, 0.9)
    assert len(got) == len(ref)
    for a, b in zip(got, ref):
        assert np.array_equal(a[0], b[0]) and a[1] == b[1]
        assert np.array_equal(a[3], b[3]) and a[4] == b[4]
        assert a[2] == pytest.approx(float(b[2]), rel=1e-6, abs=1e-6)


def test_nstep_keeps_every_window_but_the_truncated_short_ones():
    rounds = _rounds(3, p_term=0.0, p_trunc=0.0)
    ns = NStepReturns(3, 0.99)
    rows = _stored(ns, rounds)
    T, N = rounds[0]["reward"].shape
    assert len(rows) == (len(rounds) * T - 2) * N and ns.dropped == 0    # only the open tail waits
    g = 0.99
    r0 = rounds[0]["reward"]
    assert rows[0][2] == pytest.approx(r0[0, 0] + g * r0[1, 0] + g * g * r0[2, 0], rel=1e-6)
    trunc = _rounds(3, p_term=0.0, p_trunc=0.3)
    ns = NStepReturns(3, 0.99)
    _stored(ns, trunc)
    assert ns.dropped > 0


def test_the_learner_discounts_by_gamma_to_the_n():
    c = TrainConfig(version="v1_python", n_step=3)
    assert c.learner_config().gamma == pytest.approx(0.99 ** 3)
    assert TrainConfig(version="v1_python").learner_config().gamma == 0.99


def test_a_short_nstep_run_stores_multi_step_returns(monkeypatch):
    from core.replay import Replay
    from training.loop import train
    seen = {"max": 0.0}
    real = Replay.add

    def spy(self, batch):
        seen["max"] = max(seen["max"], float(np.max(batch["reward"])))
        return real(self, batch)

    monkeypatch.setattr(Replay, "add", spy)
    res = train(TrainConfig(version="v1b_numpy", n_step=3, max_rounds=3, seed=5))
    assert res.rounds == 3
    assert seen["max"] == pytest.approx(1 + 0.99 + 0.99 ** 2, rel=1e-6)   # CartPole: +1 a step


def test_every_recipe_is_discovered_and_builds_on_its_base():
    items = alg.algorithms()
    assert [a.name for a in items if a.error] == []
    names = [a.name for a in items]
    assert names[:7] == ["a1_dqn_defaults", "a2_dqn_selected", "a3_nstep", "a4_narrow_net",
                         "a5_searched", "a5b_searched_wider", "a6_pqn"]
    assert alg.settings("a1_dqn_defaults") == {}
    assert alg.settings("a4_narrow_net") == {"n_step": 3, "hidden": 64}
    for a in items:
        alg.config_class(a.loop)(**alg.settings(a.name), version="x").check()
        assert (a.path / "NOTES.md").exists()


def test_a2_carries_the_committed_selection():
    """a2's learning rate is the one `make e2e`'s selection chose in the run it names."""
    a2 = alg.get("a2_dqn_selected")
    run = a2.references[0].split("run ")[1].split(" ")[0]
    found = []
    for path in (ROOT / "results").glob("*/trials.jsonl"):
        for line in path.read_text().splitlines():
            r = json.loads(line)
            if r.get("run_id") == run and r.get("selected"):
                found.append(r["params"])
    assert found, f"no selected trial of run {run} in results/"
    assert all(p["lr"] == a2.changes["lr"] for p in found)
    assert found[0]["updates_per_round"] == TrainConfig.updates_per_round
    assert found[0]["batch_size"] == TrainConfig.batch_size


def test_an_option_the_rung_does_not_take_is_refused():
    a = replace(alg.get("a3_nstep"), takes=("lr",))
    assert alg.parse_overrides(["lr=0.001"], a) == {"lr": 0.001}
    with pytest.raises(StudyError, match="does not take buffer_size"):
        alg.parse_overrides(["buffer_size=10"], a)
    with pytest.raises(StudyError, match="finite"):
        alg.parse_overrides(["lr=inf"], a)


def test_a_broken_recipe_is_listed_with_its_reason(tmp_path, monkeypatch):
    pkg = tmp_path / "algos_broken"
    (pkg / "a1_bad").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a1_bad" / "recipe.py").write_text(
        "from training.algorithm import Algorithm\n"
        "ALGORITHM = Algorithm(number='1', title='t', summary='s', changes={'nope': 1})\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    (got,) = alg.algorithms(pkg)
    assert got.error and "nope" in got.error
    with pytest.raises(StudyError, match="broken"):
        alg.get("a1_bad", [got])


def test_the_command_verifies_the_learner_and_trains_a_recipe():
    """End to end on a lowered bar: the native learner is checked at the recipe's update
    (64 units, gamma^3) before its run, and the run solves."""
    p = subprocess.run([sys.executable, "-m", "harness", "algorithms", "--algorithm", "a4_narrow_net",
                        "--version", "v1b_numpy", "--learner", "l3_native_update", "--seeds", "1",
                        "--no-record", "--set", "threshold=40", "--set", "window=10",
                        "--set", "eval_episodes=3"], cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "a4_narrow_net seed 100: solved=True" in p.stdout


@pytest.mark.parametrize("name", ["a5_searched", "a5b_searched_wider"])
def test_a_searched_rung_carries_the_committed_search(name):
    """A searched rung's changes are the settings its named search run selected, and that
    search started from the rung's base in the space the command declares for it."""
    from harness.cmd_algorithms import SEARCH_SPACES
    a = alg.get(name)
    run = a.references[0].split("run ")[1].split(" ")[0]
    found = []
    for path in (ROOT / "results").glob("*/algorithm_trials.jsonl"):
        for line in path.read_text().splitlines():
            r = json.loads(line)
            if r.get("run_id") == run and r.get("selected"):
                found.append(r)
    assert found, f"no selected trial of run {run} in results/"
    assert found[0]["base"] == a.base
    assert found[0]["space"] == json.loads(json.dumps(SEARCH_SPACES[a.base]))
    want = {**alg.settings(a.base), **found[0]["params"]}
    got = alg.settings(name)
    assert {k: got.get(k, getattr(TrainConfig, k)) for k in want} == want


def _forward_view(r, term, done, q_next, gamma, lam):
    """Peng's Q(lambda) return in its forward view: the lambda-weighted mix of k-step returns
    G(k) = r_t + ... + g^(k-1) r_{t+k-1} + g^k max Q(s'_{t+k-1}) (no bootstrap past a
    termination), k up to the episode's end or the round's, the last one taking the rest."""
    T, N = r.shape
    G = np.zeros((T, N))
    for i in range(N):
        for t in range(T):
            K = 1
            while t + K - 1 < T - 1 and not done[t + K - 1, i]:
                K += 1
            parts = []
            for k in range(1, K + 1):
                ret = sum(gamma ** j * r[t + j, i] for j in range(k))
                end = t + k - 1
                ret += 0.0 if term[end, i] else gamma ** k * q_next[end, i]
                parts.append(ret)
            w = [(1 - lam) * lam ** (k - 1) for k in range(1, K)] + [lam ** (K - 1)]
            G[t, i] = sum(a * b for a, b in zip(w, parts))
    return G


@pytest.mark.parametrize("lam", [0.0, 0.65, 1.0])
def test_pqn_lambda_targets_match_the_forward_view(lam):
    from training.pqn import lambda_targets
    rng = np.random.default_rng(4)
    T, N = 9, 6
    r = rng.normal(size=(T, N))
    term = rng.random((T, N)) < 0.15
    done = term | (rng.random((T, N)) < 0.1)
    q = rng.normal(size=(T, N))
    np.testing.assert_allclose(lambda_targets(r, term, done, q, 0.9, lam),
                               _forward_view(r, term, done, q, 0.9, lam), rtol=1e-10, atol=1e-10)


def test_pqn_refuses_what_it_does_not_take():
    a6 = alg.get("a6_pqn")
    with pytest.raises(StudyError, match="a6_pqn does not take buffer_size"):
        alg.parse_overrides(["buffer_size=10"], a6)
    from training.pqn import PQNConfig
    with pytest.raises(StudyError, match="--q-lambda"):
        PQNConfig(version="x", q_lambda=1.5).check()
    with pytest.raises(StudyError, match="--minibatches"):
        PQNConfig(version="x", envs=2, steps=2, minibatches=8).check()


def test_a_pqn_run_learns_on_a_lowered_bar():
    from training.pqn import PQNConfig, train_pqn
    res = train_pqn(PQNConfig(version="v1b_numpy", seed=3, threshold=60, window=10,
                              eval_episodes=3, max_rounds=200, eps_decay_rounds=10))
    assert res.solved and res.updates == res.rounds * 16
    assert res.flops == res.updates * res.flops_per_update + res.transitions * 2 * (
        4 * 128 + 128 * 128 + 2 * 128)


def test_the_report_section_matches_its_rows(tmp_path):
    """Every measured rung is in the table, and each FLOPs ratio is a1's median over its own,
    recomputed here from the rows."""
    import statistics
    from report.context import Context
    from report.sections.algorithms import render, runs
    ctx = Context(report_dir=tmp_path)
    g = runs(ctx)
    if "a1_dqn_defaults" not in g:
        pytest.skip("no algorithm rows on the report's machine")
    text = render(ctx)

    def med(name):
        return statistics.median(r["flops"] for r in g[name] if r.get("solved"))
    for name in g:
        assert f"`{name}`" in text
        if name != "a1_dqn_defaults" and any(r.get("solved") for r in g[name]):
            assert f"{med('a1_dqn_defaults') / med(name):.1f}x fewer" in text


def test_a_median_of_mostly_unsolved_seeds_is_not_a_time():
    from report.sections.algorithms import stats
    rows = [{"seed": i, "solved": i < 2, "wall_s": 1.0 + i, "budget_s": 300, "updates": 10,
             "transitions": 10, "flops": 10.0} for i in range(5)]
    s = stats(rows)
    assert s["solved"] == 2 and s["time"][1] == float("inf")
    rows[2]["solved"] = True
    assert stats(rows)["time"][1] == 3.0


def test_the_ladder_is_a_stage_of_make_bench():
    from harness.bench import bench_stages
    stages = {name: (order, title) for order, name, title, _ in bench_stages("cartpole")}
    assert "algorithms" in stages
    learners, e2e = stages["learners"][0], stages["e2e"][0]
    assert learners < stages["algorithms"][0] < e2e       # after the rows it picks its pair from
    assert "algorithms" not in {name for _, name, _, _ in bench_stages("chess")}


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
