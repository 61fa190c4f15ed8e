"""Peers: each adapter produces CartPole trajectories; a missing package is a clean skip;
the harness stage writes rows of kind "peers"; the report section renders from rows."""
import builtins
import json

import numpy as np
import pytest

import peers
from peers.base import PeerUnavailable

# EnvPool's gymnasium spaces are built from float64 bounds; Gymnasium warns about that.
pytestmark = pytest.mark.filterwarnings("ignore:.*precision lowered by casting")

N, T = 4, 8
X_LIMIT, THETA_LIMIT = 2.4, 12 * 2 * np.pi / 360


def _make_or_skip(name, policy):
    try:
        return peers.make(name, N, policy, seed=1)
    except PeerUnavailable as e:
        pytest.skip(f"{name}: {e}")


@pytest.mark.parametrize("policy", ["random", "egreedy"])
@pytest.mark.parametrize("name", peers.NAMES)
def test_peer_produces_cartpole_trajectories(name, policy):
    p = _make_or_skip(name, policy)
    try:
        batches = []
        for _ in range(6):                              # 48 steps: episodes must end
            b = p.generate(T)
            batches.append({k: np.array(v) for k, v in b.items()})
        info = p.info()
    finally:
        p.close()
    assert info["peer"] == name and info["differs"] and info["autoreset"]
    obs = np.concatenate([b["obs"] for b in batches])
    act = np.concatenate([b["action"] for b in batches])
    term = np.concatenate([b["terminated"] for b in batches])
    assert obs.shape == (6 * T, N, 4) and act.shape == (6 * T, N)
    assert np.isfinite(obs).all()
    # Observations before a step lie inside the episode's bounds (the pole has not fallen),
    # except, for next-step peers, the final observation they hand back once more before
    # their dummy reset step (and for EnvPool async, whose recv() pairs obs with its flag).
    next_step = peers.peer_class(name).autoreset.startswith("next-step")
    ok = np.ones(term.shape, bool)
    if name == "envpool_async":
        ok &= ~term
    elif next_step:
        ok[1:] &= ~term[:-1]
    o = obs[ok]
    assert (np.abs(o[:, 0]) <= X_LIMIT + 1e-6).all()
    assert (np.abs(o[:, 2]) <= THETA_LIMIT + 1e-6).all()
    assert set(np.unique(act)) <= {0, 1} and len(np.unique(act)) == 2
    assert term.any(), "no episode ended in 48 steps"
    # After a terminal step the next observation is a fresh start (|s| <= 0.05).
    t_idx, e_idx = np.nonzero(term[:-1])
    if name != "envpool_async":                        # async batches are not time-major
        start = obs[t_idx + 1, e_idx]
        if peers.peer_class(name).autoreset.startswith("next-step"):
            start = obs[np.minimum(t_idx + 2, len(obs) - 1), e_idx]   # one dummy step later
            start = start[t_idx + 2 < len(obs)]
        assert (np.abs(start) <= 0.05 + 1e-6).all()
    if "next_obs" in batches[0] and name != "envpool_async":
        nxt = np.concatenate([b["next_obs"] for b in batches])
        if peers.peer_class(name).autoreset.startswith("same-step"):
            # a terminal step's next_obs is the final observation: out of bounds
            final = nxt[term]
            assert ((np.abs(final[:, 0]) > X_LIMIT) | (np.abs(final[:, 2]) > THETA_LIMIT)).all()


def test_missing_package_is_a_clean_skip(monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.split(".")[0] in ("envpool", "gymnax", "jax"):
            raise ImportError(f"No module named '{name}' (simulated)")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    for name in ("envpool_sync", "envpool_async", "gymnax"):
        with pytest.raises(PeerUnavailable, match="simulated"):
            peers.make(name, N, "random")
    from peers.child import measure
    row = measure("envpool_sync", N, T, "random", budget_s=0.01, min_repeats=1)
    assert row["skipped"] is True and "simulated" in row["reason"]
    assert row["peer"] == "envpool_sync" and row["n_envs"] == N


def test_async_refuses_absurd_process_counts():
    from peers.gym_peers import ASYNC_MAX_ENVS
    with pytest.raises(PeerUnavailable, match="one process per environment"):
        peers.make("gym_async", ASYNC_MAX_ENVS + 1, "random")


def test_child_measures_and_prints_a_row(capsys):
    from peers.child import main
    main(["--peer", "gym_numpy", "--envs", "4", "--steps", "8", "--budget", "0.02",
          "--min-repeats", "2", "--max-repeats", "3"])
    line = [l for l in capsys.readouterr().out.splitlines() if l.startswith("PEER_ROW ")][0]
    row = json.loads(line[len("PEER_ROW "):])
    assert row["skipped"] is False
    assert row["transitions_per_s"] > 0 and row["repeats"] >= 2
    assert row["steps"] == 8 and row["requested_steps"] == 8 and row["n_envs"] == 4
    assert row["threads"] == 1 and row["policy_threads"] == 1


def test_stage_writes_rows_and_section_renders(tmp_path, monkeypatch):
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path / "results"))
    from harness import cmd_peers
    notes = []
    rows = cmd_peers.measure_all(True, notes.append, names=["gym_numpy", "gym_async"],
                                 shapes=((4, 4), (300, 2)), policies=("random",))
    assert len(rows) == 4 and notes
    by = {(r["peer"], r["n_envs"]): r for r in rows}
    assert by[("gym_numpy", 4)]["skipped"] is False
    assert by[("gym_numpy", 4)]["transitions_per_s"] > 0
    assert by[("gym_async", 300)]["skipped"] is True      # over the process limit
    from core import results
    saved = results.load("peers", quick=True, directory=tmp_path / "results")
    assert len(saved) == 4 and all(r["kind"] == "peers" for r in saved)
    assert all("provenance" in r for r in saved)

    from report.context import Context
    import report.sections.peers as section
    ctx = Context(results_dir=tmp_path / "results", report_dir=tmp_path / "report", quick=True)
    text = section.render(ctx)
    assert text.startswith("## Peers")        # no rows at the bench shapes: says so
    assert "No peer rows at this shape" in text


def test_section_and_headline_from_rows(tmp_path):
    """Synthetic rows in, ratios out: the headline is computed, not written."""
    from core import results
    d = tmp_path / "results"
    for peer, title, tp in (("envpool_sync", "EnvPool sync", 2e6), ("gym_sync", "Gymnasium SyncVectorEnv", 5e4)):
        for pol in ("random", "egreedy"):
            results.append("peers", dict(peer=peer, title=title, policy=pol, n_envs=4096,
                                         steps=32, requested_steps=32, threads=1,
                                         transitions_per_s=tp, median_s=4096 * 32 / tp,
                                         startup_s=0.1, autoreset="next-step", differs="x",
                                         skipped=False), directory=d)
    results.append("peers", dict(peer="gymnax", title="gymnax", policy="random", n_envs=4096,
                                 requested_steps=32, skipped=True, reason="no jax"), directory=d)
    for pol, tp in (("random", 6.2e6), ("egreedy", 1e6)):
        results.append("throughput", dict(version="v9_fast", number="9", title="Fast",
                                          policy=pol, n_envs=4096, steps=32, requested_steps=32,
                                          workers=2, transitions_per_s=tp,
                                          samples_s=[4096 * 32 / tp]), directory=d)
    from report.context import Context
    import report.sections.peers as section
    ctx = Context(results_dir=d, report_dir=tmp_path / "report")
    h = section.headline(ctx)
    assert "v9_fast" in h and "EnvPool sync" in h
    assert "3.1x the transitions per second" in h          # 6.2e6 / 2e6
    assert "2x fewer transitions per second" in h           # 1e6 / 2e6
    text = section.render(ctx)
    assert "skipped: no jax" in text and "3.1x" in text
    assert (tmp_path / "report" / "figures" / "peers.png").exists()


def test_a_crashing_peer_is_a_skipped_row_not_a_dead_stage():
    from harness.cmd_peers import run_one
    row = run_one("no_such_peer", 4, 4, "random", quick=True, threads=1)
    assert row["skipped"] is True and "no_such_peer" in row["reason"]


def test_a_hung_peer_times_out_as_a_skipped_row(monkeypatch):
    from harness import cmd_peers
    monkeypatch.setattr(cmd_peers, "settings", lambda quick: {
        "budget": 0.01, "min_repeats": 1, "max_repeats": 1, "timeout": 0.05})
    t0 = __import__("time").perf_counter()
    row = cmd_peers.run_one("gym_numpy", 4, 4, "random", quick=True)
    assert row["skipped"] is True and "timed out" in row["reason"]
    assert __import__("time").perf_counter() - t0 < 10
