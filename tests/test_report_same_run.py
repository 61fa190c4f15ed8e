"""A ratio's two sides from one run (issue: every ratio from one run): the peers' table and
headline divide a rung's rate by a peer's measured in the same run, and give the range over
every run that measured both; a rung and a peer that no run measured together get no ratio."""
import pytest

from core import results


def _rows(d, run, version=None, peer=None, tps=1.0):
    row = {"policy": "random", "n_envs": 4096, "requested_steps": 32, "steps": 32, "workers": 1,
           "transitions_per_s": tps, "samples_s": [0.1], "run_id": run}
    if version:
        results.append("throughput", {**row, "version": version, "purpose": "ladder"}, directory=d)
    if peer:
        results.append("peers", {**row, "peer": peer}, directory=d)


@pytest.fixture
def ctx(tmp_path, monkeypatch):
    from report.context import Context
    d = tmp_path / "res"
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(d))
    _rows(d, "A", version="v4_cpp", tps=100.0)              # the rung alone
    _rows(d, "B", version="v4_cpp", tps=80.0)
    _rows(d, "B", peer="gym_numpy", tps=10.0)               # both: 8x
    _rows(d, "C", version="v4_cpp", tps=90.0)
    _rows(d, "C", peer="gym_numpy", tps=20.0)               # both: 4.5x
    _rows(d, "D", peer="gym_numpy", tps=1.0)                # the peer alone
    return Context(results_dir=d, report_dir=tmp_path / "rep")


def test_only_runs_that_measured_both_give_a_ratio(ctx):
    from report.sections import peers
    pairs = peers.same_run(ctx, "v4_cpp", "gym_numpy", 4096, 32, "random")
    assert [(run, a / b) for run, a, b in pairs] == [("B", 8.0), ("C", 4.5)]
    cell = peers.ratio_cell(pairs)
    assert "run C" in cell and "over 2 runs" in cell and cell.startswith("4.5x")
    assert peers.ratio_cell([]) == "no run measured both"
    assert peers.same_run(ctx, "v5_openmp", "gym_numpy", 4096, 32, "random") == []
