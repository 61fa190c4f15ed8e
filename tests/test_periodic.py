"""The practitioner's criterion (issue: peers judged only by a stricter rule than their own):
a greedy evaluation every so many environment steps, trained at the first that passes,
the evaluations' time kept out of training time; in our loop, in the peers' Judge, in the
e2e stage's rows and in the report.
"""
import json

import numpy as np
import pytest

from core.errors import StudyError
from core.evaluate import Periodic, eval_seed, greedy_eval
from tests.helpers import md_table, numbers


def balancer():
    """A hand-written controller that holds CartPole-v1 for its 500 steps."""
    return lambda obs: (obs[:, 2] + 0.5 * obs[:, 3] > 0).astype(np.int64)


def pusher():
    """Always push left: every episode ends within a dozen steps."""
    return lambda obs: np.zeros(len(obs), np.int64)


def test_the_controllers_are_what_the_tests_take_them_for():
    assert greedy_eval(balancer(), 4, seed=3) == [500] * 4
    assert max(greedy_eval(pusher(), 4, seed=3)) < 20


def test_periodic_evaluates_once_per_multiple_and_stops_after_the_first_pass():
    built = []

    def act_fn(policy):
        def make():
            built.append(1)
            return policy()
        return make

    p = Periodic(every=1000, episodes=3, threshold=475, seed=eval_seed(5))
    assert p.check(999, 0.1, act_fn(pusher)) == 0.0 and not built       # before the first multiple
    assert p.check(1000, 0.2, act_fn(pusher)) > 0 and len(built) == 1
    assert not p.passed and p.check(1500, 0.3, act_fn(pusher)) == 0.0   # same multiple
    assert p.check(3700, 0.5, act_fn(pusher)) > 0 and p.next == 4000    # one evaluation for 2000 and 3000
    assert p.check(4100, 0.7, act_fn(balancer)) > 0
    assert p.passed and p.passed_s == 0.7 and p.passed_steps == 4100
    assert p.check(5000, 0.9, act_fn(balancer)) == 0.0 and len(built) == 3   # none after the pass
    row = p.row()
    assert [e[0] for e in row["evals"]] == [1000, 3700, 4100] and row["evals"][-1][2] == 500
    assert row["eval_s"] == pytest.approx(p.eval_s) and row["eval_s"] > 0
    json.dumps(row)


def test_periodic_threshold_is_the_mean_over_its_episodes():
    p = Periodic(every=10, episodes=2, threshold=499.0, seed=1)
    p.check(10, 1.0, balancer)
    assert p.passed and p.evals[0][2] == 500.0
    q = Periodic(every=10, episodes=2, threshold=501.0, seed=1)     # above what any episode returns
    q.check(10, 1.0, balancer)
    assert not q.passed and q.evals[0][2] == 500.0
    off = Periodic(every=0, episodes=2, threshold=1.0, seed=1)
    assert off.check(10 ** 6, 1.0, balancer) == 0.0 and not off.evals


def test_judge_stops_at_the_periodic_pass_and_leaves_its_time_out():
    from peers.train.common import Judge, Settings
    s = Settings(peer="x", seed=2, budget_s=100, eval_episodes=3, eval_every=500, stop_at="periodic")
    j = Judge(s, balancer)
    j.start()
    for r in (500.0,) * 200:               # the study's half would hold: not looked at
        j.episode(r)
    assert not j.should_stop(499)
    assert j.should_stop(512) and j.stop_reason == "periodic"
    res = j.result()
    assert res["solved"] is False and res["evals"] == 0              # no confirmation was run
    per = res["periodic"]
    assert per["passed"] and per["passed_env_steps"] == 512 and per["evals"][0][0] == 512
    assert res["eval_s"] == pytest.approx(per["eval_s"]) and per["eval_s"] > 0
    assert per["passed_s"] < per["eval_s"] + 1.0 and res["stop_at"] == "periodic"


def test_judge_keeps_both_criteria_when_stopping_at_solved():
    from peers.train.common import Judge, Settings
    s = Settings(peer="x", seed=2, budget_s=100, threshold=9.0, window=3, eval_gap_s=0.0,
                 eval_episodes=3, eval_every=100)
    j = Judge(s, pusher)                  # greedy returns ~9-10: the threshold 9 can pass
    j.start()
    for r in (10.0, 10.0, 10.0):
        j.episode(r)
    j.should_stop(150)
    res = j.result()
    assert res["periodic"]["evals"] and res["evals"] == 1
    assert res["eval_s"] == pytest.approx(j.eval_s_strict + res["periodic"]["eval_s"])


def test_periodic_rows_of_a_capped_peer_are_comparable():
    """PufferLib's own CartPole stops at 200 steps, so the study's training half cannot hold;
    the practitioner's criterion only asks of Gymnasium's CartPole-v1."""
    from peers.train.child import finalize
    from peers.train.common import Judge, Settings
    s = Settings(peer="pufferlib_ppo", seed=1, budget_s=10, window=1, eval_episodes=2,
                 eval_every=100, stop_at="periodic")
    j = Judge(s, balancer)
    j.start()
    j.episode(199.0)
    assert j.should_stop(128)
    out = {"library": "pufferlib", "_judge": j,
           "_diagnostic": {"comparable": False, "criterion": "adapted: test", "episode_cap": 200,
                           "episodes_total": 10, "last_epoch_mean_length": 199.0}}
    row = finalize(s, out, t_proc0=0.0)
    assert row["status"] == "periodic_passed" and row["comparable"] is True and row["reason"] is None
    failed = finalize(Settings(peer="sb3_dqn", seed=1, budget_s=10, eval_every=100, stop_at="periodic"),
                      {"_judge": _spent_judge()}, t_proc0=0.0)
    assert failed["status"] == "periodic_not_passed" and "no periodic evaluation passed" in failed["reason"]


def _spent_judge():
    from peers.train.common import Judge, Settings
    j = Judge(Settings(peer="sb3_dqn", seed=1, budget_s=0.0, eval_episodes=2, eval_every=100,
                       stop_at="periodic"), pusher)
    j.start()
    assert j.should_stop(150) and j.stop_reason == "budget"
    return j


@pytest.mark.parametrize("changes, match", [
    ({"stop_at": "periodic"}, "needs --eval-every"),
    ({"eval_every": -1}, "--eval-every must be"),
    ({"eval_every": 2.5}, "--eval-every must be"),
    ({"stop_at": "never", "eval_every": 10}, "--stop-at must be"),
])
def test_train_config_refuses_a_bad_periodic_setting(changes, match):
    from training.config import TrainConfig
    with pytest.raises(StudyError, match=match):
        TrainConfig(version="v1b_numpy", **changes).check()


def test_our_loop_stops_at_the_periodic_pass(monkeypatch):
    """The loop evaluates the learner's weights at the first round's end past each multiple,
    keeps the evaluation out of its time, and stops there with stop_at='periodic'."""
    from training import loop
    seen = []

    def fake_eval(act, episodes, seed):
        seen.append(seed)
        return [500] * episodes if len(seen) >= 2 else [9] * episodes
    monkeypatch.setattr("core.evaluate.greedy_eval", fake_eval)
    from training.config import TrainConfig
    cfg = TrainConfig(version="v1b_numpy", envs=4, steps=8, updates_per_round=2, batch_size=32,
                      eval_every=100, stop_at="periodic", seed=3, max_rounds=50)
    res = loop.train(cfg)
    per = res.periodic
    assert [e[0] for e in per["evals"]] == [128, 224] and per["passed"]   # 32 transitions a round
    assert res.rounds == 7 and not res.solved and res.evals == 0
    assert seen == [eval_seed(3)] * 2 and per["passed_s"] <= res.wall_s + 1e-9
    assert res.row()["periodic"]["passed"] is True and res.row()["periodic"]["every"] == 100


def test_e2e_refuses_a_bad_cadence_in_one_line():
    import subprocess
    import sys
    from tests.conftest import ROOT
    p = subprocess.run([sys.executable, "-m", "harness", "e2e", "--stop-at", "periodic",
                        "--eval-every", "0"], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 2 and "--eval-every" in p.stderr and "Traceback" not in p.stderr


def test_e2e_periodic_rows_go_apart_and_fail_only_when_not_passed():
    from harness.cmd_e2e import counts_as_failure, kind_of
    assert kind_of({"stop_at": "solved"}) == "e2e" and kind_of({"stop_at": "periodic"}) == "e2e_periodic"
    ours = {"config": {"stop_at": "periodic"}, "solved": False, "periodic": {"passed": True}}
    assert not counts_as_failure(ours, quick=False)
    assert counts_as_failure({**ours, "periodic": {"passed": False}}, quick=False)
    assert not counts_as_failure({**ours, "periodic": {"passed": False}}, quick=True)
    peer = {"stop_at": "periodic", "solved": False, "periodic": {"passed": True}}
    assert not counts_as_failure(peer, quick=False)
    assert counts_as_failure({"solved": False}, quick=False)


def test_trials_zero_reuses_the_newest_selection(monkeypatch, tmp_path):
    from core import results
    from harness.cmd_e2e import newest_selection
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path))
    notes = []
    assert newest_selection("v5c", "l4b", False, notes.append) is None and "no earlier" in notes[-1]
    for i, (lr, sel) in enumerate(((1e-3, True), (2e-3, False), (3e-3, True))):
        results.append("trials", {"trial": i, "version": "v5c", "learner": "l4b", "selected": sel,
                                  "params": {"lr": lr}})
    results.append("trials", {"trial": 3, "version": "v5c", "learner": "other", "selected": True,
                              "params": {"lr": 9.0}})
    assert newest_selection("v5c", "l4b", False, notes.append) == {"lr": 3e-3}


def _ours(seed, wall, solved, label="default"):
    return {"family": "ladder", "entry": "vA x lB", "label": label, "mode": "alternating",
            "seed": seed, "solved": solved, "wall_s": wall, "budget_s": 300.0, "rounds": 10,
            "updates": 100, "transitions": 6400, "startup_s": 0.01, "final_mean_return": 480.0,
            "gen_s": 0.1, "wait_s": 0.1, "learn_s": 0.5, "store_s": 0.01, "push_s": 0.01,
            "config": {"stop_at": "solved"}}


def _peer(seed, wall, solved, **kw):
    return {"family": "peer", "entry": "sb3_dqn", "peer": "sb3_dqn", "title": "SB3 DQN",
            "seed": seed, "solved": solved, "wall_s": wall, "budget_s": 300.0,
            "status": "solved" if solved else "not_solved", "env_steps": 50_000,
            "gradient_updates": 1000, "startup_s": 4.0, "last100_mean": 200.0, **kw}


def _periodic(passed_s, steps=20_480):
    return {"every": 10_000, "episodes": 20, "threshold": 475.0, "passed": passed_s is not None,
            "passed_s": passed_s, "passed_env_steps": steps if passed_s is not None else None,
            "evals": [[steps, passed_s or 300.0, 500.0 if passed_s is not None else 100.0]],
            "eval_s": 0.3}


def test_the_report_gives_both_criteria_and_both_ratios(tmp_path):
    """Every row gets the practitioner's time beside the study's; ratios under both; a peer
    that never solves by the study's criterion but passes a periodic evaluation is timed."""
    from core import results
    from report.context import Context
    from report.sections import trained
    d = tmp_path / "results"
    for s, t in zip(range(100, 103), (4.0, 5.0, 6.0)):
        results.append("e2e", _ours(s, t, True), directory=d)
        results.append("e2e", _peer(s, 300.0, False), directory=d)
    for s, t, p in zip(range(100, 103), (1.0, 2.0, 3.0), (30.0, 20.0, None)):
        results.append("e2e_periodic", {**_ours(s, t, False), "periodic": _periodic(t),
                                         "config": {"stop_at": "periodic", "envs": 20, "steps": 32}},
                       directory=d)
        results.append("e2e_periodic", _peer(s, p or 300.0, False, stop_at="periodic",
                                             periodic=_periodic(p, 40_000)), directory=d)
    ctx = Context(results_dir=d, report_dir=tmp_path / "report")
    text = trained.render(ctx)
    # the numbers of each cell, from the rows above: ours solved in 4, 5, 6 s and passed the
    # periodic evaluation at 1, 2, 3 s (20,480 steps, training mean 480); the peer never
    # solved within its 300 s and passed at 30 s, 20 s and not at all (40,000 steps, 200)
    main = {r["Who"]: r for r in md_table(text, "Practitioner's criterion [IQR]")}
    ours, peer = main["`vA x lB`"], main["SB3 DQN"]
    assert numbers(ours["Solved"]) == [3, 3] and numbers(peer["Solved"]) == [0, 3]
    assert numbers(ours["Time to solved [IQR]"]) == [5, 4, 6]           # median [q1-q3]
    assert numbers(peer["Time to solved [IQR]"]) == [300]               # the budget
    assert numbers(ours["Practitioner's criterion [IQR]"]) == [2, 1, 3, 3, 3]
    assert numbers(peer["Practitioner's criterion [IQR]"]) == [30, 20, 300, 2, 3]   # q3 > budget
    both = {r["Who"]: r for r in md_table(text, "Env steps at the pass (median)")}
    ours, peer = both["`vA x lB`"], both["SB3 DQN"]
    assert [numbers(ours[k]) for k in ("x the fastest of ours", "x the fastest of ours (2)",
                                       "Env steps at the pass (median)",
                                       "Last-100 training mean at the pass")] == [[1], [1], [20_480], [480]]
    assert [numbers(peer[k]) for k in ("Study's criterion", "x the fastest of ours",
                                       "x the fastest of ours (2)", "Env steps at the pass (median)",
                                       "Last-100 training mean at the pass")] == \
        [[300], [300 / 5], [30 / 2], [40_000], [200]]
    assert "`vA x lB` under both criteria" in text
    paragraphs = [numbers(p) for p in text.split("\n\n")]
    # 5 passed (3 ours, 2 the peer's), all 5 at their first evaluation, 2 of the 5 training
    # means below the criterion (the peer's 200s)
    assert [5, 5, 2, 5] in [p[:4] for p in paragraphs]
    assert any({10_000, 20 * 32} <= set(p) for p in paragraphs)          # every, our round
    assert (tmp_path / "report" / "figures" / "time_to_trained_both.png").exists()
    head = trained.headline(ctx)
    assert 30 / 2 in numbers(head) and "SB3 DQN" in head
    # none of the peer's seeds passing: "not met", and the headline says no peer passed
    d2 = tmp_path / "r2"
    results.append("e2e", _ours(100, 4.0, True), directory=d2)
    results.append("e2e_periodic", {**_ours(100, 1.0, False), "periodic": _periodic(1.0)}, directory=d2)
    results.append("e2e_periodic", _peer(100, 300.0, False, periodic=_periodic(None)), directory=d2)
    puffer = {**_peer(100, 40.0, False, periodic=_periodic(40.0, 524_288)), "entry": "pufferlib_ppo",
              "peer": "pufferlib_ppo", "title": "PufferLib"}
    results.append("e2e_periodic", puffer, directory=d2)
    ctx2 = Context(results_dir=d2, report_dir=tmp_path / "rep2")
    text2 = trained.render(ctx2)
    cells = {r["Who"]: r["Practitioner's criterion"] for r in md_table(text2, "Env steps at the pass (median)")}
    assert numbers(cells["SB3 DQN"]) == [300, 0, 1] and "not met" in cells["SB3 DQN"]
    assert 524_288 in numbers(text2)                      # where PufferLib's first evaluation fell
    head2 = trained.headline(ctx2)
    assert 40 / 1 in numbers(head2) and "PufferLib" in head2
    d3 = tmp_path / "r3"
    results.append("e2e", _ours(100, 4.0, True), directory=d3)
    results.append("e2e_periodic", {**_ours(100, 1.0, False), "periodic": _periodic(1.0)}, directory=d3)
    results.append("e2e_periodic", _peer(100, 300.0, False, periodic=_periodic(None)), directory=d3)
    head3 = trained.headline(Context(results_dir=d3, report_dir=tmp_path / "rep3"))
    assert 300 in numbers(head3) and "no peer passed" in head3


def test_without_periodic_rows_the_table_is_as_before(tmp_path):
    from core import results
    from report.context import Context
    from report.sections import trained
    d = tmp_path / "results"
    results.append("e2e", _ours(100, 4.0, True), directory=d)
    text = trained.render(Context(results_dir=d, report_dir=tmp_path / "report"))
    assert "Practitioner's" not in text and "| Who | Solved | Time to solved [IQR] | Start-up |" in text


def test_an_e2e_row_whose_code_changed_is_marked(tmp_path):
    """e2e rows carry their code's hash (core/code_hash.py): one that no longer matches the
    code here is marked †, and the mark explained; the others are not."""
    from core import results
    from report.context import Context
    from report.sections import trained
    d = tmp_path / "results"
    for s, t in zip(range(100, 103), (4.0, 5.0, 6.0)):
        results.append("e2e", _ours(s, t, True), directory=d)
        row = _peer(s, 300.0, False)
        row["code"] = {**results.code_of(row), "hash": "0" * 12}            # ran other code
        results.append("e2e", row, directory=d)
    text = trained.render(Context(results_dir=d, report_dir=tmp_path / "report"))
    assert "| SB3 DQN † | 0/3 |" in text and "| `vA x lB` | 3/3 |" in text
    assert "† the code these rows ran has changed since" in text


def test_a_peer_timed_in_another_run_gets_no_ratio(tmp_path, monkeypatch):
    """The table's ratios and the quickest-peer sentence divide two medians of one run only:
    a peer from another run is said to be, with both times and no ratio."""
    from core import results
    from report.context import Context
    from report.sections import trained
    d = tmp_path / "results"
    results.append("e2e", _ours(100, 4.0, True), directory=d)
    results.append("e2e_periodic", {**_ours(100, 2.0, False), "periodic": _periodic(2.0),
                                     "config": {"stop_at": "periodic", "envs": 20, "steps": 32}}, directory=d)
    monkeypatch.setattr(results, "RUN_ID", "20990101T000000-other")
    results.append("e2e", _peer(100, 3.0, True), directory=d)
    results.append("e2e_periodic", _peer(100, 1.0, False, stop_at="periodic", periodic=_periodic(1.0, 40_000)),
                   directory=d)
    text = trained.render(Context(results_dir=d, report_dir=tmp_path / "report"))
    peer = {r["Who"]: r for r in md_table(text, "Env steps at the pass (median)")}["SB3 DQN"]
    assert peer["x the fastest of ours"] == "other run" and peer["x the fastest of ours (2)"] == "other run"
    assert "(different runs: no ratio)" in text and "our time (same run)" not in text


def test_the_work_note_says_fewer_updates_where_a_peer_needs_fewer():
    """A peer's updates against ours: the cost of each where the counts are alike and the peer
    is slower; 'fewer than ours' where it needs fewer; a multiple where it needs more."""
    from report.sections.trained import work_note

    def s(field, n):
        return {"rows": [{"solved": True, field: n}]}
    ours = s("updates", 30_000)
    assert work_note(s("gradient_updates", 10_000), ours, slower=False).endswith(": 3.0x fewer than ours.")
    assert "not their number" in work_note(s("gradient_updates", 33_000), ours, slower=True)
    assert work_note(s("gradient_updates", 33_000), ours, slower=False).endswith("about as many as ours.")
    assert work_note(s("gradient_updates", 90_000), ours, slower=True).endswith("3.0x the updates, besides what each costs.")


def test_a_peer_faster_than_ours_is_said_to_be_sooner_not_0x():
    from report.parts.trained_peers import sooner
    assert sooner(1.39, 0.675, "the peer") == "2.1x later than the peer"
    assert sooner(4.0, 3.3, "the peer") == "1.2x later than the peer"
    assert sooner(1.0, 24.0, "the peer") == "24x sooner than the peer"
    assert sooner(2.0, 3.0, "the peer") == "1.5x sooner than the peer"
