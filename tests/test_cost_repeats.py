"""report/cost_repeats.py: a chess cost run repeated within a run reads as one row, the
median of its repeats, in file order; rows costed once, and other runs', pass unchanged."""
from report.cost_repeats import merge


def _row(run, learner, round_s, learn, repeat=0, algorithm="a8_48_units"):
    r = {"run_id": run, "algorithm": algorithm, "version": "v5c_blocked_sparse", "learner": learner,
         "round_s": round_s, "time": f"t{round_s}",
         "round_gen_s": {"median": 0.004, "q1": 0.003, "q3": 0.005},
         "round_store_s": {"median": 0.001}, "round_learn_s": {"median": learn, "n": 50}}
    if repeat:
        r["repeat"] = repeat
    return r


def test_repeats_merge_to_their_median_and_keep_each_value():
    rows = [_row("R", "l4c", 0.020, 0.015), _row("R", "l4h", 0.016, 0.011),
            _row("R", "l4c", 0.030, 0.025, 1), _row("R", "l4h", 0.014, 0.009, 1),
            _row("R", "l4c", 0.022, 0.017, 2), _row("R", "l4h", 0.015, 0.010, 2)]
    c, h = merge(rows)
    assert (c["learner"], h["learner"]) == ("l4c", "l4h")
    assert c["round_s"] == 0.022 and c["repeats_round_s"] == [0.020, 0.030, 0.022]
    assert c["round_learn_s"]["median"] == 0.017 and c["round_learn_s"]["repeats"] == [0.015, 0.025, 0.017]
    assert c["round_learn_s"]["n"] == 50 and c["time"] == "t0.022"     # the newest repeat's time
    assert h["round_s"] == 0.015 and h["round_gen_s"]["median"] == 0.004
    assert "repeat" not in c                                            # the first row's fields


def test_single_rows_and_other_runs_pass_unchanged():
    a, b = _row("R1", "l4c", 0.02, 0.015), _row("R2", "l4c", 0.03, 0.02)
    x = _row("R2", "l4c", 0.03, 0.02, algorithm="a1_today")
    assert merge([a, b, x]) == [a, b, x]
    assert merge([]) == []


def test_a_rows_mean_round_is_its_cost_a_round_and_its_parts_sum_stays_beside_it():
    """Rows that recorded the cost run's mean round are read with it as `round_s` (what the
    estimates multiply), alone or merged with repeats; rows without it keep their `round_s`."""
    a = {**_row("R", "l4c", 0.020, 0.015), "round_mean_s": 0.024}
    (one,) = merge([a])
    assert one["round_s"] == 0.024 and one["round_parts_s"] == 0.020 and a["round_s"] == 0.020
    b = {**_row("R", "l4c", 0.021, 0.016, 1), "round_mean_s": 0.030}
    c = {**_row("R", "l4c", 0.019, 0.014, 2), "round_mean_s": 0.026}
    (m,) = merge([a, b, c])
    assert m["round_s"] == 0.026 and m["repeats_round_s"] == [0.024, 0.030, 0.026]
    old = _row("R0", "l4c", 0.02, 0.015)
    assert merge([old]) == [old]
