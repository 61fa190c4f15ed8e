"""Every chess rung on threads, as discovered (v5_openmp: v4's batch on OpenMP threads;
v5b_sparse_net, v5c_blocked_sparse, v5d_streamed, v5e_counted_reply and any later one; a rung
that streams its batch past the caches streams every batch here, however small): every
batch at 1-3 threads passes the python-chess replay (check 1)
and equals v4's (check 2: exactly under random play; under egreedy up to a near tie, which
the replay's tie tolerance judges); bad worker counts are refused in one line.

Skipped, with the reason, where a module is not built (`make build`)."""
import numpy as np
import pytest

from core.api import GenConfig
from core.discover import get_rung, rungs
from core.errors import StudyError
from versions.chess.common import spec
from versions.chess.common.net import init_weights
from versions.chess.common.replay import compare_batches, verify_replay
from versions.chess.common.verify import run_batches

TOP = 2 ** 64 - 1
# every discovered chess rung that runs on threads (a new one is checked with no edit here)
RUNGS = tuple(r.name for r in rungs("chess") if r.parallel == "threads")


def _streams(name: str) -> bool:
    from native.loader import load
    mod, _ = load(f"_chess_{name}")
    return mod is not None and hasattr(mod, "set_stream_bytes")


STREAMED = tuple(f"_chess_{n}" for n in RUNGS if _streams(n))      # those with a streaming threshold


def rung(name):
    r = get_rung(name, "chess")
    why = r.unavailable_reason()
    if why:
        pytest.skip(why)
    return r


@pytest.fixture(autouse=True)
def stream_every_batch():
    """v5d and v5e stream only batches past their threshold (8 MiB); these tests' batches
    are small, so the threshold is 0 while they run: the streamed path is the one checked."""
    from native.loader import load
    mods = [load(m)[0] for m in STREAMED]
    before = [m.stream_bytes() for m in mods]
    for m in mods:
        m.set_stream_bytes(0)
    yield
    for m, b in zip(mods, before):
        m.set_stream_bytes(b)


@pytest.mark.parametrize("name", RUNGS)
@pytest.mark.parametrize("policy,seed", [("random", 0), ("random", TOP), ("egreedy", 3), ("egreedy", TOP)])
def test_threads_give_v4s_batches_and_pass_the_replay(name, policy, seed):
    r, v4 = rung(name), rung("v4_cpp")
    n, T, calls = 7, (24 if policy == "random" else 8), 2
    w = init_weights(5)
    base = GenConfig(n_envs=n, seed=seed, policy=policy, epsilon=0.2, weights=w)
    ref = run_batches(v4.make_generator, base, T, calls)
    for workers in (1, 2, 3):
        got = run_batches(r.make_generator, GenConfig(**{**base.__dict__, "workers": workers}), T, calls)
        assert verify_replay(got, seed, n, policy, 0.2, w) == [], (name, workers)
        assert compare_batches(got, ref, policy, w, seed=seed) == [], (name, workers)
        if policy == "random":
            for g, b in zip(got, ref):
                for k in spec.ARRAY_NAMES:
                    assert np.array_equal(g[k], b[k]), (name, workers, k)


def test_the_sparse_forward_picks_the_dense_greedy_action_in_long_games():
    """Greedy play (epsilon 0) for 60 moves in 16 games: every action is the dense
    reference's masked argmax unless within the contract's tie tolerance (the replay)."""
    r = rung("v5b_sparse_net")
    w = init_weights(11)
    cfg = GenConfig(n_envs=16, seed=11, policy="egreedy", epsilon=0.0, weights=w, workers=2)
    got = run_batches(r.make_generator, cfg, 30, 2)
    assert verify_replay(got, 11, 16, "egreedy", 0.0, w) == []


@pytest.mark.parametrize("workers", [1, 2])
def test_register_blocks_give_v5bs_floats(workers):
    """v5c sums the same rows in the same order as v5b: equal batches, greedy play included."""
    v5b, v5c = rung("v5b_sparse_net"), rung("v5c_blocked_sparse")
    w = init_weights(13)
    cfg = GenConfig(n_envs=24, seed=13, policy="egreedy", epsilon=0.1, weights=w, workers=workers)
    a, b = run_batches(v5b.make_generator, cfg, 20, 2), run_batches(v5c.make_generator, cfg, 20, 2)
    for x, y in zip(a, b):
        for k in spec.ARRAY_NAMES:
            assert np.array_equal(x[k], y[k]), k


@pytest.mark.parametrize("name", RUNGS)
def test_bad_worker_counts_are_refused(name):
    r = rung(name)
    for bad in (0, 65):
        with pytest.raises(StudyError, match="workers"):
            r.make_generator(GenConfig(n_envs=2, workers=bad))


@pytest.mark.parametrize("module", STREAMED)
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_streamed_batches_are_v5cs_past_the_threshold_and_below_it(module, workers):
    """At its own threshold (a batch of 600 x 32 is 27 MB: streamed) and below it (20 x 32:
    v5's loop), v5d's batches, and v5e's (its counted reply too), are v5c's bit for bit,
    greedy play included."""
    from native.loader import require
    v5c, streamed = rung("v5c_blocked_sparse"), rung(module.removeprefix("_chess_"))
    require(module).set_stream_bytes(8 << 20)
    w = init_weights(17)
    for n, T, policy in ((600, 32, "random"), (20, 32, "random"), (300, 32, "egreedy")):
        cfg = GenConfig(n_envs=n, seed=17, policy=policy, epsilon=0.3, weights=w, workers=workers)
        a, b = run_batches(v5c.make_generator, cfg, T, 2), run_batches(streamed.make_generator, cfg, T, 2)
        for x, y in zip(a, b):
            for k in spec.ARRAY_NAMES:
                assert np.array_equal(x[k], y[k]), (n, policy, k)
