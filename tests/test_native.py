"""The C++ rungs (v4_cpp, v5_openmp, v5b_simd): verification at awkward sizes and thread counts.

Every rung is compared with v1's batch (harness.verify.compare_batches) and replayed in
Gymnasium (check_gymnasium) for both policies, N = 1, 7, 37 (not multiples of any vector
width or tile) and 1..4 threads. A rung whose module is not built, or whose instruction
set this CPU lacks, is skipped with the reason its available() gives.
"""
import numpy as np
import pytest

from core.api import GenConfig, balancing_weights, init_weights
from harness.verify import check_gymnasium, compare_batches, run_generator
from versions.v1_python.rollout import PythonGenerator

RUNGS = ["v4_cpp", "v5_openmp", "v5b_simd"]
MODULES = {"v4_cpp": "_v4_cpp", "v5_openmp": "_v5_openmp", "v5b_simd": "_v5b_simd"}
SIZES = [1, 7, 37]
POLICIES = ["random", "egreedy"]
T, CALLS = 24, 2

_refs = {}


def rung(name):
    from core.discover import get_rung
    v = get_rung(name)
    why = v.unavailable_reason()
    if why:
        pytest.skip(f"{name}: {why}")
    return v


def native_core(name, n, egreedy, threads=1, seed=0, epsilon=0.1):
    """The rung's native Rollout object itself (tile sizes and kernels are its attributes)."""
    from native.loader import require
    mod = require(MODULES[name])
    if rung(name).parallel:
        return mod.Rollout(n, seed, egreedy, epsilon, threads)
    return mod.Rollout(n, seed, egreedy, epsilon)


def config(n, policy, workers=1, seed=11, **kw):
    return GenConfig(n_envs=n, seed=seed, policy=policy, epsilon=kw.pop("epsilon", 0.25),
                     workers=workers, **kw)


def reference(n, policy):
    key = (n, policy)
    if key not in _refs:
        _refs[key] = run_generator(PythonGenerator, config(n, policy), T, CALLS)
    return _refs[key]


def thread_counts(v):
    return [1, 2, 3, 4] if v.parallel else [1]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", RUNGS)
def test_matches_v1_and_gymnasium(name, n, policy):
    v = rung(name)
    ref = reference(n, policy)
    base = None
    for w in thread_counts(v):
        cfg = config(n, policy, workers=w)
        got = run_generator(v.make_generator, cfg, T, CALLS)
        err = compare_batches(got, ref, cfg)
        assert err is None, f"{name} workers={w} vs v1: {err}"
        if base is None:
            base = got
            err = check_gymnasium(got, cfg)
            assert err is None, f"{name} vs Gymnasium: {err}"
        else:
            for k in base:
                assert np.array_equal(got[k], base[k]), f"{name}: {k} differs between 1 and {w} threads"


@pytest.mark.parametrize("name", RUNGS)
def test_truncation_across_calls(name):
    """The balancing network reaches the 500-step limit; episodes span several calls."""
    v = rung(name)
    cfg = config(7, "egreedy", workers=2 if v.parallel else 1, seed=5, epsilon=0.02,
                 weights=balancing_weights())
    got = run_generator(v.make_generator, cfg, 180, 3)
    assert got["truncated"].any(), "no episode reached truncation"
    ref = run_generator(PythonGenerator, cfg, 180, 3)
    assert compare_batches(got, ref, cfg) is None
    assert check_gymnasium(got, cfg) is None


@pytest.mark.parametrize("name", RUNGS)
def test_set_weights_between_calls(name):
    v = rung(name)
    cfg = config(9, "egreedy", workers=2 if v.parallel else 1, seed=2)

    def run(make):
        g = make(cfg)
        out = [{k: a.copy() for k, a in g.generate(16).items()}]
        g.set_weights(init_weights(99))
        g.set_epsilon(0.5)
        out.append({k: a.copy() for k, a in g.generate(16).items()})
        g.close()
        return {k: np.concatenate([o[k] for o in out]) for k in out[0]}

    got, ref = run(v.make_generator), run(PythonGenerator)
    cfg2 = config(9, "egreedy", seed=2, epsilon=0.5, weights=init_weights(99))
    # the first half is checked against the first weights, the second against the new ones
    half = lambda b, s: {k: a[s] for k, a in b.items()}  # noqa: E731
    assert compare_batches(half(got, slice(0, 16)), half(ref, slice(0, 16)), cfg) is None
    assert compare_batches(half(got, slice(16, 32)), half(ref, slice(16, 32)), cfg2) is None


@pytest.mark.parametrize("name", RUNGS)
def test_check_values_and_buffer_reuse(name):
    """WORKLOAD.md's check values (seed 0, env 0) and outputs filled in place, not reallocated."""
    v = rung(name)
    g = v.make_generator(GenConfig(n_envs=3, seed=0, policy="random"))
    b1 = g.generate(16)
    np.testing.assert_allclose(b1["obs"][0, 0], [0.031934, -0.040546, 0.024553, 0.019003], atol=1e-6)
    assert b1["action"][:, 0].tolist() == [1, 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0]
    ptr = b1["obs"].ctypes.data
    b2 = g.generate(16)
    assert b2["obs"].ctypes.data == ptr, "output arrays were reallocated between calls"
    assert b2["obs"].flags.c_contiguous and b2["action"].dtype == np.int64
    g.close()


@pytest.mark.parametrize("name", RUNGS)
def test_build_info(name):
    v = rung(name)
    info = v.build_info()
    assert info["compiler"] and info["flags"]
    assert "-ffast-math" not in info["flags"].split()
    assert "-ffp-contract=off" in info["flags"].split()
    if v.parallel:
        assert info["openmp"], "threaded rung built without OpenMP"


@pytest.mark.parametrize("name", RUNGS)
def test_micro_callables(name):
    v = rung(name)
    v.micro_step(37)()
    v.micro_forward(37)()
    # the forward kernel alone agrees with a float64 evaluation (ties aside)
    from harness.verify import TIE_TOL, q_values64
    from native.pygen import NativeGenerator
    g = NativeGenerator(GenConfig(n_envs=37, policy="egreedy", weights=init_weights(4), workers=2),
                        native_core(name, 37, True, threads=2))
    g.set_weights(init_weights(4))
    obs = np.random.default_rng(1).normal(0, 0.1, (101, 4)).astype(np.float32)
    act = np.empty(101, np.int64)
    g.core.greedy_batch(obs, act)
    q = q_values64(init_weights(4), obs)
    ok = (act == (q[:, 1] > q[:, 0])) | (np.abs(q[:, 1] - q[:, 0]) < TIE_TOL)
    assert ok.all()


def test_missing_module_is_a_reason_not_a_crash():
    from native.loader import available
    why = available("_no_such_study_module")
    assert isinstance(why, str) and "not built" in why


def test_vector_trig_matches_glibc():
    """v5b's vector sin/cos (with its glibc fallback) gives glibc's bits on CartPole's angles."""
    v = rung("v5b_simd")
    from native.loader import load
    mod, _ = load(MODULES[v.name])
    for lo, hi in [(-0.3, 0.3), (-0.5, 0.5), (-1e-3, 1e-3), (-0.7, 0.7)]:
        bad, fallbacks = mod.trig_check(lo, hi, 200_000)
        assert bad == 0, f"{bad} sin/cos values differ from glibc on [{lo}, {hi}]"


@pytest.mark.parametrize("policy", POLICIES)
def test_simd_tile_widths_agree(policy):
    """v5b uses 48-env tiles when every thread gets two, else 16: same batch either way."""
    v = rung("v5b_simd")
    n = 100                                   # 1 thread: tiles 48+48+4; 2 threads: 16-env tiles
    assert native_core("v5b_simd", n, False, threads=1).tile == 48
    assert native_core("v5b_simd", n, False, threads=2).tile == 16
    b1 = run_generator(v.make_generator, config(n, policy, workers=1), T, CALLS)
    b2 = run_generator(v.make_generator, config(n, policy, workers=2), T, CALLS)
    for k in b1:
        assert np.array_equal(b1[k], b2[k]), f"{k} differs between tile widths"
    assert check_gymnasium(b1, config(n, policy)) is None
    if policy == "random":
        assert compare_batches(b1, run_generator(PythonGenerator, config(n, policy), T, CALLS),
                               config(n, policy)) is None


def test_division_by_total_mass_is_exact():
    """v5b replaces x / 1.1 by a reciprocal multiply and one FMA correction: same bits."""
    v = rung("v5b_simd")
    from native.loader import load
    mod, _ = load(MODULES[v.name])
    if not hasattr(mod, "div_check"):
        pytest.skip("v5b built without AVX-512: it divides")
    assert mod.div_check(12345, 2_000_000) == 0


@pytest.mark.parametrize("policy", POLICIES)
def test_simd_portable_fallback_verifies(policy):
    """v5b's scalar fallback (the same source built for baseline x86-64) verifies too."""
    rung("v5b_simd")
    from native.loader import load
    from native.pygen import NativeGenerator
    mod, why = load("_v5b_simd_portable")
    if why:
        pytest.skip(why)
    assert "scalar" in mod.build_info()["kernel_isa"]
    n = 37

    def make(cfg):
        return NativeGenerator(cfg, mod.Rollout(cfg.n_envs, cfg.seed, cfg.policy == "egreedy",
                                                cfg.epsilon, cfg.workers))

    got = run_generator(make, config(n, policy, workers=2), T, CALLS)
    assert compare_batches(got, reference(n, policy), config(n, policy)) is None
    assert check_gymnasium(got, config(n, policy)) is None
    bad, fallbacks = mod.trig_check(-0.3, 0.3, 48_000)
    assert bad == 0 and fallbacks == 96_000              # every lane goes to glibc


@pytest.mark.parametrize("hidden", [1, 33])
@pytest.mark.parametrize("name", RUNGS)
def test_other_hidden_sizes(name, hidden):
    """H need not be a multiple of the kernels' 8-row panels or 16-float vectors."""
    v = rung(name)
    cfg = config(19, "egreedy", workers=2 if v.parallel else 1, seed=8,
                 weights=init_weights(8, hidden=hidden))
    got = run_generator(v.make_generator, cfg, 16, 2)
    assert compare_batches(got, run_generator(PythonGenerator, cfg, 16, 2), cfg) is None
    assert check_gymnasium(got, cfg) is None
