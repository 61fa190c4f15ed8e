"""Chess in seconds against its targets (report/parts/chess_seconds_targets.py) and the sweeps
behind the recipes (report/parts/chess_sweeps.py), on synthetic rows: each target met or not
with the numbers it is judged on, the spread between runs, and the sweep table's medians."""
from __future__ import annotations

import re

from tests.helpers import md_table, numbers
from tests.test_chess_knobs_report import FAST, _append

COST, OTHER = "20260101T000000-cost", "20260102T000000-other"
L4F = "l4f_prefetched_rows"


def _cost(d, recipe, version, learner, round_s, run=COST):
    _append(d, "chess_algorithm_cost", {"workload": "chess", "algorithm": recipe, "version": version,
                                        "learner": learner, "round_s": round_s}, run)


def _seeds(d, recipe, learner, rounds, times, run):
    for i, t in enumerate(times):
        _append(d, "chess_algorithm", {
            "workload": "chess", "algorithm": recipe, "version": FAST[0], "learner": learner,
            "seed": 100 + i, "reached": True, "rounds_to_criterion": rounds, "time_to_criterion_s": t,
            "updates_to_criterion": 4 * rounds, "flops": 1e9, "settings": {"envs": 512, "steps": 4},
            "threads": 2, "workers": 2, "learner_check": {"status": "passed", "checks": []}}, run)


def _learner(d, learner, update_s, run="20260103T000000-learn"):
    _append(d, "learner", {"workload": "chess", "learner": learner, "threads": 2, "device": "cpu",
                           "update_s": update_s, "number": "4"}, run)


def _targets(d, tmp_path):
    from report.context import Context
    from report.sections import chess_algorithms as ca
    c = Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")
    text = ca.knobs(c)
    line = next(x for x in text.splitlines() if x.startswith("**Chess in seconds, its targets**"))
    return dict(re.findall(r"(at most 10 s over|>= 300x sooner|>= 4x `l4c_native_chess`'s|each estimate within 10%)"
                           r"(.*?)(?=; (?:>= 300x|an exact|each estimate)|\.$)", line)), line


def _ladder(d, a8_l4f_times, a8_round=0.02, learner_x=(1.0, 0.5)):
    _cost(d, "a1_today", "v1_python", "l1_torch_eager", 2.0)
    _cost(d, "a1_today", *FAST, 0.1)
    _cost(d, "a8_48_units", *FAST, 0.03)
    _cost(d, "a8_48_units", FAST[0], L4F, a8_round)
    _seeds(d, "a1_today", FAST[1], 1000, [100.0] * 5, "20251231T000000-lad")
    _seeds(d, "a8_48_units", FAST[1], 400, [12.0] * 5, COST)
    _seeds(d, "a8_48_units", L4F, 400, a8_l4f_times, COST)
    _learner(d, "l4c_native_chess", learner_x[0] * 1e-3)
    _learner(d, "l4e_lazy_adamw", learner_x[1] * 1e-3)


def _as_other_machine(src, d, cpu: str = "Test CPU Other") -> str:
    """Move the rows written under src (this machine's folder there) into results folder d as
    another machine's (`cpu`), with its machine.json; returns that machine's id."""
    import json
    from core.machine import machine_id
    (s,) = [p for p in src.iterdir() if p.is_dir()]
    for f in s.glob("*.jsonl"):
        rows = [json.loads(x) for x in f.read_text().splitlines()]
        for r in rows:
            r["provenance"]["machine"]["cpu"] = cpu
        other = machine_id(rows[0]["provenance"]["machine"])
        (d / other).mkdir(exist_ok=True)
        (d / other / f.name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / other / "machine.json").write_text(json.dumps({**rows[0]["provenance"]["machine"], "id": other}))
    return other


def test_targets_met_with_their_numbers(tmp_path):
    d = tmp_path / "res"
    _ladder(d, [8.0, 8.2, 7.8, 8.1, 7.9], learner_x=(1.0, 0.2))
    got, line = _targets(d, tmp_path)
    time = got["at most 10 s over"]
    assert "8 s" in time and "5/5 seeds" in time and "**met**" in time
    # the practitioner's loop: 1000 rounds x 2 s; the best: 400 x 20 ms = 8 s: 250x, under 300x
    over = got[">= 300x sooner"]
    assert "250x" in over and "**not met**" in over
    assert "5.00x" in got[">= 4x `l4c_native_chess`'s"] and "**met**" in got[">= 4x `l4c_native_chess`'s"]
    est = got["each estimate within 10%"]
    # l4c: 400 x 30 ms = 12 s against 12 s (+0%, met); l4f: 8 s against a median 8 s (+0%)
    assert est.count("**met**") == 2 and "not met" not in est


def test_a_slow_run_an_estimate_off_and_a_slow_learner_are_not_met(tmp_path):
    d = tmp_path / "res"
    _seeds(d, "a8_48_units", L4F, 400, [8.0] * 5, OTHER)             # an earlier run that met it
    _ladder(d, [10.0, 11.0, 10.5, 12.0, 11.5], a8_round=0.0125)     # estimate 5 s against 11 s
    got, line = _targets(d, tmp_path)
    time = got["at most 10 s over"]
    assert "11 s" in time and "**not met**" in time
    assert "ranged 8 s-11 s, at most 10 s in 1 of them" in time
    assert "2.00x" in got[">= 4x `l4c_native_chess`'s"] and "**not met**" in got[">= 4x `l4c_native_chess`'s"]
    est = got["each estimate within 10%"]
    l4f = est[est.index(f"`{L4F}`"):]
    assert numbers(l4f)[:1] == [-55] and "**not met**" in l4f


def test_the_sweep_table_gives_each_recipes_median_rounds_and_what_it_changed(tmp_path):
    from report.context import Context
    from report.parts.chess_sweeps import sweep_table
    d = tmp_path / "res"
    base = {"hidden": 48, "envs": 512, "steps": 4, "seed": 0, "lr": 0.001}
    for name, cfg, rounds in (("n1024", {**base, "envs": 1024, "steps": 2}, (408, None, 396)),   # finished first
                              ("a8", base, (396, 360, 384)), ("lr2", {**base, "lr": 0.002}, (500, 520, 510))):
        for seed, r in enumerate(rounds):
            _append(d, "chess_sweep", {"workload": "chess", "recipe": name, "seed": seed,
                                       "config": {**cfg, "seed": seed}, "reached": r is not None,
                                       "rounds_to_criterion": r}, "20260104T000000-sweep9")
    c = Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")
    rows = {r["Recipe"]: r for r in md_table(sweep_table(c), "Rounds to the score, median (range)")}
    col = "Settings (where not the sweep's common ones)"
    assert rows["`a8`"][col] == "(the common settings)"
    assert rows["`lr2`"][col] == "lr 0.002"
    assert numbers(rows["`a8`"]["Rounds to the score, median (range)"]) == [384, 360, 396]
    assert rows["`a8`"]["Score"] == "0.75"                       # no criterion in the config: the ladder's
    assert rows["`n1024`"][col] == "envs 1024, steps 2"
    assert rows["`n1024`"]["Reached"] == "2/3"
    assert numbers(rows["`n1024`"]["Rounds to the score, median (range)"]) == [402, 396, 408]
    _append(d, "chess_sweep", {"workload": "chess", "recipe": "s90", "seed": 0, "reached": True,
                               "config": {**base, "criterion": 0.9}, "rounds_to_criterion": 1100},
            "20260105T000000-sweep10")
    c = Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")
    rows = {r["Recipe"]: r for r in md_table(sweep_table(c), "Rounds to the score, median (range)")}
    assert rows["`s90`"]["Score"] == "0.9" and rows["`s90`"]["Settings (where not the sweep's common ones)"] == "(the common settings)"
    # a sweep to 0.9 with its curves: the rounds to 0.75 read from them; a loop's settings named
    curve = lambda first: [{"round": k, "score": 0.76 if k >= first else 0.6} for k in (100, 200, 300)]
    for name, loop, firsts in (("m1", {"average": 0.97}, (200, 300)), ("m3", {"average": 0.97, "material": 3.0}, (100, 200))):
        for seed, first in enumerate(firsts):
            _append(d, "chess_sweep", {"workload": "chess", "recipe": name, "seed": seed, "reached": True,
                                       "config": {**base, "criterion": 0.9}, "rounds_to_criterion": 900,
                                       "loop": {"side_by_side": "in turn", **loop}, "curve": curve(first)},
                    "20260106T000000-sweep14")
    c = Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")
    rows = {r["Recipe"]: r for r in md_table(sweep_table(c), "Rounds to the score, median (range)")}
    assert rows["`m1`"]["Settings (where not the sweep's common ones)"] == "material 1"
    assert rows["`m3`"]["Settings (where not the sweep's common ones)"] == "material 3"
    assert rows["`m1`"]["Rounds to the score, median (range)"] == "900 (900-900); to 0.75: 250 (200-300)"
    assert rows["`m3`"]["Rounds to the score, median (range)"] == "900 (900-900); to 0.75: 150 (100-200)"


def test_an_estimate_gives_its_error_in_every_run_that_costed_and_trained_it(tmp_path):
    d = tmp_path / "res"
    _cost(d, "a8_48_units", FAST[0], L4F, 0.025, run=OTHER)          # 400 x 25 ms = 10 s against 8 s
    _seeds(d, "a8_48_units", L4F, 400, [8.0] * 5, OTHER)
    _ladder(d, [8.0, 8.2, 7.8, 8.1, 7.9])                            # 400 x 20 ms = 8 s against 8 s
    got, line = _targets(d, tmp_path)
    est = got["each estimate within 10%"]
    l4f = est[est.index(f"`{L4F}`"):]
    assert numbers(l4f)[:1] == [0] and "**met**" in l4f
    assert "in the 2 runs that costed and trained it +0% to +25%, within 10% in 1" in l4f


def test_an_estimate_takes_the_median_of_its_cost_runs_between_the_seeds(tmp_path):
    """A trained recipe costed again before each seed: the estimate is rounds x the median
    round of its cost runs (400 x 20 ms = 8 s, not the first run's 400 x 30 ms), and says
    over how many cost runs and their range."""
    d = tmp_path / "res"
    _ladder(d, [8.0, 8.2, 7.8, 8.1, 7.9], a8_round=0.03)
    for k, round_s in enumerate((0.02, 0.019, 0.021, 0.02), start=1):
        _append(d, "chess_algorithm_cost", {"workload": "chess", "algorithm": "a8_48_units", "version": FAST[0],
                                            "learner": L4F, "round_s": round_s, "repeat": k}, COST)
    got, line = _targets(d, tmp_path)
    est = got["each estimate within 10%"]
    l4f = est[est.index(f"`{L4F}`"):]
    assert numbers(l4f)[:1] == [0] and "**met**" in l4f.split(";")[0]
    assert "the median of 5 cost runs between the seeds, 19 ms-30 ms" in l4f


def _costed_between_seeds(d, run, mean_s):
    """a8 on L4F costed five times between the seeds, each cost run's mean round mean_s."""
    for k in range(5):
        _append(d, "chess_algorithm_cost", {"workload": "chess", "algorithm": "a8_48_units", "version": FAST[0],
                                            "learner": L4F, "round_s": 0.9 * mean_s, "round_mean_s": mean_s,
                                            **({"repeat": k} if k else {})}, run)


def test_the_estimates_of_every_run_pooled_say_whether_the_method_leans(tmp_path):
    """Every run costed the current way (cost runs between the seeds, their mean round) gives one
    estimate error; their median, spread and count within 10%, and the cost a round's own part.
    A run costed once (the older way) is left out of the pool. Errors of +0%, +25% and -20%:
    median 0, the method does not lean; all +30%: it does."""
    def pooled(errors, tag):
        d = tmp_path / tag
        _ladder(d, [8.0] * 5)                                         # costed once: out of the pool
        for i, e in enumerate(errors):
            run = f"2026020{i + 1}T000000-{tag}"
            _costed_between_seeds(d, run, 0.02 * (1 + e))             # 400 rounds x 20 ms = 8 s measured
            _seeds(d, "a8_48_units", L4F, 400, [8.0] * 5, run)
        got, line = _targets(d, tmp_path / f"rep-{tag}")
        est = got["each estimate within 10%"]
        return est[est.index("over every run"):]

    even = pooled([0.0, 0.25, -0.2], "even")
    assert "(the cost runs between the seeds, their mean round: 3 estimates)" in even
    assert "median +0% (-20% to +25%, within 10% in 1)" in even
    assert "the complete runs' own (median over seeds) median +0% (-20% to +25%)" in even
    assert "does not lean either way" in even
    leaning = pooled([0.3, 0.3, 0.3], "lean")
    assert "median +30% (+30% to +30%, within 10% in 0)" in leaning and "leans one way" in leaning
    assert "does not lean" not in leaning


def test_the_stretch_takes_the_best_run_to_the_higher_score_with_its_overrides(tmp_path):
    """Rows with a criterion above the ladder's: the group (run, recipe, pair, overrides)
    with the lowest median time, against the same 10 s over >= 5 seeds, with that group's
    medians in every run that trained it (met in its best run only, when at most half of them
    are within 10 s); the ladder's own rows never enter it, nor it the ladder."""
    from report.context import Context
    from report.parts import chess_ladder_data as ca
    from report.parts.chess_seconds_targets import _stretch
    d = tmp_path / "res"
    _seeds(d, "a8_48_units", L4F, 400, [7.0] * 5, COST)                        # the ladder's (0.75)
    for run, times, over in (("20260105T000000-s1", [20.0, 18.0, 19.0, 21.0, 17.0], {}),
                             ("20260106T000000-s2", [9.0, 9.5, 8.0, 12.0, 9.9], {"n_step": 2}),
                             ("20260107T000000-s3", [30.0] * 5, {}),
                             ("20260108T000000-s4", [11.0] * 5, {"n_step": 2})):
        for i, t in enumerate(times):
            _append(d, "chess_algorithm", {
                "workload": "chess", "algorithm": "a8_48_units", "version": FAST[0], "learner": L4F,
                "seed": 100 + i, "reached": True, "rounds_to_criterion": 1000 + i, "time_to_criterion_s": t,
                "updates_to_criterion": 4000, "flops": 1e9, "settings": {"envs": 512, "steps": 4},
                "criterion": 0.9, "overrides": over}, run)
    c = Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")
    text = _stretch(c, ca)
    assert "a score of 0.9 " in text and "with n_step 2" in text and "20260106T000000-s2" in text
    assert numbers(text[text.index("n_step 2,") + 9:])[:4] == [9.5, 9, 9.9, 1002]    # median, IQR, rounds
    assert "the best of 4 runs" in text and "**met in 1 of its 2 runs only**; in the 2 runs that" in text
    assert text.endswith("its median ranged 9.5 s-11 s, at most 10 s in 1 of them")   # the same group's runs
    for i, t in enumerate([9.0, 9.2, 9.4, 9.6, 9.8]):                   # a third run: 2 of 3 within
        _append(d, "chess_algorithm", {
            "workload": "chess", "algorithm": "a8_48_units", "version": FAST[0], "learner": L4F,
            "seed": 100 + i, "reached": True, "rounds_to_criterion": 1000 + i, "time_to_criterion_s": t,
            "updates_to_criterion": 4000, "flops": 1e9, "settings": {"envs": 512, "steps": 4},
            "criterion": 0.9, "overrides": {"n_step": 2}}, "20260109T000000-s5")
    text = _stretch(Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess"), ca)
    assert "20260109T000000-s5" in text and "**met**; in the 3 runs" in text and "at most 10 s in 2 of them" in text
    assert {r["run_id"] for r in c.rows("chess_algorithm")} == {COST}
    assert ca.medians_by_run(c, "a8_48_units", FAST[0], L4F) == [7.0]


def test_the_learner_target_gives_its_factor_in_every_run_that_timed_both(tmp_path):
    """The newest run's best learner against l4c, then the same pair's factor in each run
    that timed both at that thread count: its lowest and highest."""
    d = tmp_path / "res"
    _learner(d, "l4c_native_chess", 1.2e-3, "20260101T000000-learn0")    # earlier: 3.00x
    _learner(d, "l4e_lazy_adamw", 0.4e-3, "20260101T000000-learn0")
    _learner(d, "l4c_native_chess", 1.0e-3, "20260102T000000-learnx")    # l4c alone: no factor
    _ladder(d, [8.0] * 5, learner_x=(1.0, 0.5))                          # 2.00x in the newest run
    got, _ = _targets(d, tmp_path)
    x = got[">= 4x `l4c_native_chess`'s"]
    assert "`l4e_lazy_adamw` 2.00x" in x and "in the 2 runs that timed both it ranged 2.00x-3.00x" in x
    assert "**not met**" in x


def test_another_machines_ladder_gets_its_own_paragraph_named_and_without_a1_no_chain(tmp_path):
    """Rows of a second machine: the report's machine keeps its paragraph as it was; the other
    machine's gets one of its own, from its rows alone, named; without a run that trained
    the first recipe there, the factor over the practitioner's loop is not estimated (its
    rounds are the practitioner's), and the estimates still are."""
    from report.context import Context
    from report.sections import chess_algorithms as ca
    d = tmp_path / "res"
    _ladder(d, [8.0, 8.2, 7.8, 8.1, 7.9], learner_x=(1.0, 0.2))
    (main,) = [p for p in d.iterdir() if p.is_dir()]
    before = ca.knobs(Context(results_dir=d, report_dir=tmp_path / "r0", machine=main.name).for_workload("chess"))
    src = tmp_path / "src"
    _cost(src, "a8_48_units", *FAST, 0.03)
    _seeds(src, "a8_48_units", FAST[1], 300, [9.0] * 5, COST)
    _learner(src, "l4c_native_chess", 1e-3)
    _learner(src, "l4e_lazy_adamw", 0.5e-3)
    other = _as_other_machine(src, d)
    text = ca.knobs(Context(results_dir=d, report_dir=tmp_path / "r1", machine=main.name).for_workload("chess"))
    lines = [x for x in text.splitlines() if x.startswith("**Chess in seconds, its targets**")]
    assert len(lines) == 2
    # the report's machine's paragraph: as before, but for the other machine's learner factor, named
    i = lines[0].index("; elsewhere (another machine's rows, not this target's): on Test CPU Other")
    j = lines[0].index(" (*The learner target*", i)
    assert lines[0][:i] + lines[0][j:] in before and "2.00x" in lines[0][i:j]
    assert "Test CPU Other" in lines[1] and f"results/{other}/" in lines[1]
    assert "9 s" in lines[1] and "**met**" in lines[1].split(";")[0]
    assert "not estimated here (no run trained `a1_today`" in lines[1]
    assert "2.00x" in lines[1] and "each estimate within 10%" in lines[1]


def test_the_readme_adds_the_fastest_other_machine_to_075_and_its_stretch(tmp_path):
    """The README's chess sentence ends with, of the other machines with a ladder run, the one
    whose best recipe x pair has the lowest median to 0.75, and there the best median to a
    higher score; with no other machine it adds nothing."""
    from report.context import Context
    from report.sections import chess_algorithms as ca
    d = tmp_path / "res"
    _ladder(d, [8.0, 8.2, 7.8, 8.1, 7.9])
    (main,) = [p for p in d.iterdir() if p.is_dir()]

    def ctx():
        return Context(results_dir=d, report_dir=tmp_path / "r", machine=main.name)
    alone = ca.headline(ctx())
    assert "7.9 s" in alone and alone.endswith(".") and " On " not in alone
    slow_s1, quick_s1, quick_s2 = [4.0] * 5, [5.0, 6.0, 4.0, 5.5, 4.5], [7.0] * 5
    for cpu, times, stretch in (("Test CPU Slow", [6.0] * 5, {"20260105T000000-s1": slow_s1}),
                                ("Test CPU Quick", [2.0, 2.2, 1.8, 2.1, 1.9],
                                 {"20260105T000000-s1": quick_s1, "20260106T000000-s2": quick_s2})):
        src = tmp_path / cpu.replace(" ", "")
        _seeds(src, "a8_48_units", FAST[1], 300, times, COST)
        for run, ts in stretch.items():
            for i, t in enumerate(ts):
                _append(src, "chess_algorithm", {
                    "workload": "chess", "algorithm": "a8_48_units", "version": FAST[0], "learner": L4F,
                    "seed": 100 + i, "reached": True, "rounds_to_criterion": 900, "time_to_criterion_s": t,
                    "updates_to_criterion": 3600, "flops": 1e9, "settings": {"envs": 512, "steps": 4},
                    "criterion": 0.9, "overrides": {}}, run)
        _as_other_machine(src, d, cpu)
    text = ca.headline(ctx())
    assert text.startswith(alone[:-1])                    # the report's machine's sentence first
    tail = text[len(alone):]
    assert tail.startswith(" On Test CPU Quick") and "Slow" not in tail
    assert f"`{FAST[0]}` x `{FAST[1]}` x `a8_48_units` reaches 0.75 in a median 2 s" in tail
    assert "5/5 seeds, run 20260101T000000-cost" in tail
    # its quicker run to 0.9 of two, named as such
    assert f"`{FAST[0]}` x `{L4F}` x `a8_48_units` a score of 0.9 in a median 5 s" in tail
    assert tail.endswith("run 20260105T000000-s1, the best of 2 runs to it).")


def test_a_recipe_measured_only_on_another_machine_says_so_in_its_notes(tmp_path):
    """A chess recipe with rows on another machine alone: its NOTES block names the report's
    machine as not measuring it, then the other machine's ladder run (time and rounds to
    0.75) and its newest run to a higher score, with the split of a side-by-side loop."""
    from report.context import Context
    from report.notes import chess_algorithm_block
    d = tmp_path / "res"
    _ladder(d, [8.0] * 5)
    (main,) = [p for p in d.iterdir() if p.is_dir()]
    src = tmp_path / "src"
    _seeds(src, "a8_48_units", FAST[1], 300, [9.0, 8.0, 10.0, 9.5, 8.5], COST)
    for i, t in enumerate([20.0, 18.0, 19.0]):
        _append(src, "chess_algorithm", {
            "workload": "chess", "algorithm": "a8_48_units", "version": FAST[0], "learner": FAST[1],
            "seed": 100 + i, "reached": True, "rounds_to_criterion": 1000 + 50 * i, "time_to_criterion_s": t,
            "updates_to_criterion": 4000 + 200 * i, "flops": 1e9, "criterion": 0.9, "threads": 2, "workers": 2,
            "settings": {}, "learner_check": {"status": "passed"},
            "side_by_side": {"overlap": True, "learner_threads": 1, "gen_workers": 1}}, OTHER)
    other = _as_other_machine(src, d)
    ctx = Context(results_dir=d, report_dir=tmp_path / "rep", machine=main.name).for_workload("chess")
    assert not chess_algorithm_block(ctx, "a8_48_units").startswith("Not measured")   # measured here
    assert chess_algorithm_block(ctx, "a2_short_horizon") is None                   # nowhere
    for f in main.glob("chess_algorithm*.jsonl"):                                   # here no longer
        f.unlink()
    ctx_other_only = Context(results_dir=d, report_dir=tmp_path / "rep2", machine=main.name).for_workload("chess")
    lines = chess_algorithm_block(ctx_other_only, "a8_48_units").splitlines()
    assert lines[0].startswith("Not measured on") and "the report's machine" in lines[0]
    assert "Test CPU Other" in lines[1] and f"results/{other}/" in lines[1] and COST in lines[1]
    assert "reached 0.75 in 5/5 seeds; time to it 9 s" in lines[1] and "300 rounds" in lines[1]
    assert lines[2].startswith(f"- On the same machine, to 0.9 (run {OTHER})")
    assert "side by side: the learner on 1 thread(s), the games on 1 worker(s)" in lines[2]
    assert "reached 0.9 in 3/3 seeds; time to it 19 s" in lines[2] and "1,050 rounds" in lines[2]


def test_another_machines_sweeps_get_their_own_named_table(tmp_path):
    """Sweeps are not pooled across machines (rounding moves trajectories): the report's
    machine's table holds its own, and each other machine's come in a table of their own,
    named."""
    from report.context import Context
    from report.parts.chess_sweeps import sweep_table, sweeps_elsewhere
    d, src = tmp_path / "res", tmp_path / "src"
    cfg = {"hidden": 48, "envs": 512, "steps": 4, "seed": 0, "lr": 0.001}
    _append(d, "chess_sweep", {"workload": "chess", "recipe": "here", "seed": 0, "config": cfg,
                               "reached": True, "rounds_to_criterion": 400}, "20260104T000000-sweep9")
    _append(src, "chess_sweep", {"workload": "chess", "recipe": "there", "seed": 0,
                                 "config": {**cfg, "criterion": 0.9}, "reached": True,
                                 "rounds_to_criterion": 1000}, "20260105T000000-sweep10")
    (main,) = [p for p in d.iterdir() if p.is_dir()]
    other = _as_other_machine(src, d)
    c = Context(results_dir=d, report_dir=tmp_path / "rep", machine=main.name).for_workload("chess")
    mine = sweep_table(c)
    assert "`here`" in mine and "`there`" not in mine
    theirs = sweeps_elsewhere(c)
    assert theirs.startswith("**Sweeps on Test CPU Other") and f"results/{other}/" in theirs
    (row,) = md_table(theirs, "Rounds to the score, median (range)")
    assert row["Recipe"] == "`there`" and row["Score"] == "0.9" and numbers(row["Reached"]) == [1, 1]
    assert "`here`" not in theirs
