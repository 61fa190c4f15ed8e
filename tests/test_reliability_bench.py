"""`bench` exits non-zero when a verification or a measurement fails and still writes the
rows that succeeded; the pipelined actor runs every rung (or a rung refuses cleanly)."""
import json

import psutil
import pytest

from core import discover, results
from core.api import GenConfig, empty_batch, init_weights
from core.api import Generator
from core.rung import Rung
from harness import bench
from harness.__main__ import build_parser


class Broken(Generator):
    """Verifies never: its batches are all zeros."""

    def set_weights(self, weights):
        pass

    def set_epsilon(self, epsilon):
        pass

    def generate(self, T):
        return empty_batch(T, self.cfg.n_envs)


BROKEN = Rung(number="98", title="Broken on purpose", summary="a rung that fails verification",
              make_generator=Broken, name="v98_broken")


@pytest.fixture
def with_broken_rung(monkeypatch, tmp_path):
    """The broken rung beside the real ones. Verification of the real rung (v1, seconds
    of Gymnasium replay, tested elsewhere) is taken as passed; the broken one is really
    verified (on the first case of WORKLOAD.md's checks), and fails."""
    from versions.cartpole.common import verify
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path / "results"))
    real_get, real_all = discover.get_rung, discover.rungs
    monkeypatch.setattr(discover, "get_rung", lambda n, w="cartpole": BROKEN if n == BROKEN.name
                        else real_get(n, w))
    monkeypatch.setattr(discover, "rungs", lambda w="cartpole": real_all(w) + [BROKEN])
    real_verify = verify.Verifier.verify
    first = verify.Verifier(cases=verify.DEFAULT_CASES[:1])
    monkeypatch.setattr(verify.Verifier, "verify", lambda self, v: real_verify(first, v)
                        if v is BROKEN else [verify.Outcome(True, "assumed", "test")])
    return tmp_path / "results"


def bench_args(*extra):
    return build_parser().parse_args(["bench", "--version", "v1_python", "--envs", "8",
                                      "--budget", "0.05", *extra])


def kinds(d, kind):
    return results.load(kind, directory=d)


def test_failed_verification_exits_1_and_keeps_the_other_rows(with_broken_rung, capsys):
    args = bench_args("--version", "v98_broken", "--policy", "random")
    assert bench.cmd_bench(args) == 1
    ver = {r["version"]: r["status"] for r in kinds(with_broken_rung, "verification")}
    assert ver == {"v1_python": "passed", "v98_broken": "failed"}
    rows = kinds(with_broken_rung, "throughput")
    assert [(r["version"], r["policy"], r["n_envs"]) for r in rows] == [("v1_python", "random", 8)]
    assert "v98_broken: FAILED verification" in capsys.readouterr().err


def test_failed_measurement_exits_1_and_keeps_the_other_rows(with_broken_rung, monkeypatch):
    real = bench.run_one

    def flaky(v, c, budget):
        return {"error": "exit 1: injected"} if c.policy == "egreedy" else real(v, c, budget)
    monkeypatch.setattr(bench, "run_one", flaky)
    assert bench.cmd_bench(bench_args()) == 1
    rows = kinds(with_broken_rung, "throughput")
    assert [(r["policy"], r["n_envs"]) for r in rows] == [("random", 8)]
    errors = [json.loads(line) for line in
              results.kind_path("throughput_errors", directory=with_broken_rung).read_text().splitlines()]
    assert [e["policy"] for e in errors] == ["egreedy"]


def test_all_good_exits_0(with_broken_rung):
    assert bench.cmd_bench(bench_args("--policy", "random")) == 0


@pytest.mark.parametrize("rung", [r.name for r in discover.rungs()])
def test_pipelined_actor_runs_every_rung(rung):
    """The pipelined actor (a spawned, non-daemon child) with every rung: two rounds with a
    weight push, or a clean StudyError for a rung that cannot run here."""
    from core.errors import StudyError
    from training.actors import ProcessActor
    r = discover.get_rung(rung)
    if r.unavailable_reason():
        pytest.skip(r.unavailable_reason())
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    workers = 2 if r.parallel else 1
    try:
        actor = ProcessActor(rung, GenConfig(n_envs=4, policy="egreedy", epsilon=0.5,
                                             weights=init_weights(0), workers=workers))
    except StudyError as e:
        assert len(str(e).splitlines()) == 1
        return
    try:
        actor.request(8, None, 0.5)
        b, _ = actor.result()
        assert b["obs"].shape == (8, 4, 4)
        actor.request(8, init_weights(1), 0.1)
        b, _ = actor.result()
        assert b["action"].shape == (8, 4)
    finally:
        actor.close()
    after = {p.pid for p in psutil.Process().children(recursive=True)}
    assert not (after - before - _helpers()), "the actor left a process"


def _helpers():
    """multiprocessing's own long-lived helpers in this process (fork server, resource
    tracker), which other tests may have started."""
    out = set()
    for p in psutil.Process().children():
        try:
            cmd = " ".join(p.cmdline())
        except psutil.Error:
            continue
        if "forkserver" in cmd or "resource_tracker" in cmd:
            out.add(p.pid)
    return out


def test_train_pipelined_v2_a_few_rounds(tmp_path, monkeypatch):
    """The failure of the issue: v2's workers inside the pipelined actor."""
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path / "results"))
    from training.config import TrainConfig
    from training.loop import train
    cfg = TrainConfig(version="v2_multiprocessing", workers=2, pipelined=True, max_rounds=3,
                      updates_per_round=4)
    res = train(cfg)
    assert res.actor == "process" and res.rounds == 3 and res.transitions == 3 * 20 * 32
