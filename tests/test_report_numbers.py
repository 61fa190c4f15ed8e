"""Report sections held to the numbers they render, recomputed from the rows given, and to
the facts of the code they quote from its one home (CartPole's solved return in
core/spec.py, training's default cap in training/config.py), not to their wording."""
import statistics
from dataclasses import replace

from core import results
from core.spec import CARTPOLE
from report.context import Context
from tests.helpers import md_table, numbers


def _solve_row(learner, seed, solved, rounds, final):
    return {"role": "learner_solve", "learner": learner, "solved": solved, "rounds": rounds,
            "final_mean_return": final, "version": "v5c_blocked_mlp",
            "config": {"seed": seed, "max_rounds": 1000, "threshold": CARTPOLE.solved_return}}


def test_the_learners_solving_table_is_its_rows(tmp_path, monkeypatch):
    from report.sections import learners
    from training.config import TrainConfig
    rows = ([_solve_row("l1_torch_eager", s, s != 2, 300 + 40 * s, 480.0 - s) for s in range(3)]
            + [_solve_row("l4b_native_round_threads", s, True, 200 + 10 * s, 490.0) for s in range(3)])
    d = tmp_path / "results"
    for r in rows:
        results.append("train", r, directory=d)
    monkeypatch.setattr(TrainConfig, "max_rounds", 777)     # the sentence quotes the code's default
    text = "\n".join(learners.solving(Context(results_dir=d, report_dir=tmp_path / "rep")))
    table = md_table(text, "Median rounds")
    assert [r["Learner"] for r in table] == ["`l1_torch_eager`", "`l4b_native_round_threads`"]
    for row in table:
        mine = [r for r in rows if f"`{r['learner']}`" == row["Learner"]]
        rounds = [r["rounds"] for r in mine if r["solved"]]
        assert numbers(row["Solved"]) == [len(rounds), len(mine)]
        assert numbers(row["Median rounds"]) == [statistics.median(rounds)]
        assert numbers(row["Range"]) == [min(rounds), max(rounds)]
        assert numbers(row["Median final return"]) == [round(statistics.median(
            r["final_mean_return"] for r in mine))]
    prose = numbers(text.split("|")[0])
    assert prose[:3] == [0, 1, 2]                                     # the seeds
    assert {1000, 777, CARTPOLE.solved_return} <= set(prose) and 500 not in prose


def _passed(first: bool, mean, passed=True):
    """A periodic row that passed at its first evaluation (first) or its second."""
    evals = [[10_000, 1.0, 480.0], [20_000, 2.0, 490.0]]
    return {"final_mean_return": mean, "periodic": {
        "passed": passed, "passed_env_steps": 10_000 if first else 20_000, "evals": evals}}


def test_the_first_evaluation_paragraph_counts_its_rows_against_the_criterion(monkeypatch):
    from report.parts import trained_periodic
    rows = [_passed(True, CARTPOLE.solved_return + 5), _passed(False, CARTPOLE.solved_return - 75),
            _passed(True, None), _passed(True, CARTPOLE.solved_return - 1),
            _passed(True, 100.0, passed=False)]
    pg = {("ladder", "a"): rows[:3], ("peer", "b"): rows[3:]}
    passed = [r for r in rows if r["periodic"]["passed"]]
    first = [r for r in passed if r["periodic"]["passed_env_steps"] == r["periodic"]["evals"][0][0]]
    means = [r["final_mean_return"] for r in passed if r["final_mean_return"] is not None]

    def shown(criterion):
        got = numbers(trained_periodic._first_evaluation_passes(pg))
        below = sum(m < criterion for m in means)
        assert got[:4] == [len(passed), len(first), below, len(means)], got
        assert criterion in got
        return below

    assert shown(CARTPOLE.solved_return) == 2
    # the criterion is read from core/spec.py, not typed in the section: moved, it moves
    monkeypatch.setattr(trained_periodic, "CARTPOLE", replace(CARTPOLE, solved_return=400.0))
    assert shown(400.0) == 0
