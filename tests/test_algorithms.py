"""The algorithm ladder (algorithms/ALGORITHM.md): n-step rows, the recipes, the command."""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from training import algorithm as alg
from core.errors import StudyError
from tests.conftest import ROOT
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
