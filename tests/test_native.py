"""The C++ rungs (v4_cpp, v5_openmp, v5b_simd, v5c_blocked_mlp): verification at awkward
sizes and thread counts, and the shared SIMD kernels on every backend built.

Every rung is compared with v1's batch (harness.verify.compare_batches) and replayed in
Gymnasium (check_gymnasium) for both policies, N = 1, 7, 37 (not multiples of any vector
width or tile) and 1..4 threads. A rung whose module is not built, or whose instruction
set this CPU lacks, is skipped with the reason its available() gives.

The SIMD rungs are built three ways (versions/cartpole/v5b_simd/simd.hpp's backends): for this CPU
(-march=native: AVX2 or AVX-512), for baseline x86-64 (`*_portable`: the scalar backend),
and v5c once more for AVX-512 (`*_avx512`), which is only run where the CPU has it.
"""
import numpy as np
import pytest

from core.api import GenConfig, balancing_weights, init_weights
from versions.cartpole.common.verify import check_gymnasium, compare_batches, run_generator
from versions.cartpole.v1_python.rollout import PythonGenerator

RUNGS = ["v4_cpp", "v5_openmp", "v5b_simd", "v5c_blocked_mlp"]
MODULES = {"v4_cpp": "_v4_cpp", "v5_openmp": "_v5_openmp", "v5b_simd": "_v5b_simd",
           "v5c_blocked_mlp": "_v5c_blocked_mlp"}
SIMD_RUNGS = ["v5b_simd", "v5c_blocked_mlp"]
# Every build of the SIMD kernels (simd.hpp backends), by module name.
SIMD_MODULES = ["_v5b_simd", "_v5b_simd_portable", "_v5c_blocked_mlp", "_v5c_blocked_mlp_portable",
                "_v5c_blocked_mlp_avx512"]
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

    def cfg_(workers):
        return config(7, "egreedy", workers=workers, seed=5, epsilon=0.02, weights=balancing_weights())
    cfg = cfg_(2 if v.parallel else 1)
    got = run_generator(v.make_generator, cfg, 180, 3)
    assert got["truncated"].any(), "no episode reached truncation"
    if "truncation" not in _refs:            # v1's batch (pure Python), once for every rung
        _refs["truncation"] = run_generator(PythonGenerator, cfg_(1), 180, 3)
    assert compare_batches(got, _refs["truncation"], cfg) is None
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


@pytest.mark.parametrize("name", ["v5_openmp", "v5b_simd", "v5c_blocked_mlp"])
def test_threads_used_are_reported(name):
    """A random-policy call below the rungs' size threshold stays on one thread, and says so
    (the report shows a row's workers_used beside the workers it asked for)."""
    v = rung(name)
    g = v.make_generator(config(64, "random", workers=2))
    try:
        g.generate(4)                         # 256 steps: serial
        assert g.workers_used == 1
        g.generate(256)                       # 16,384 steps: the team of 2
        assert g.workers_used == 2
    finally:
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
    from versions.cartpole.common.verify import TIE_TOL, q_values64
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


def simd_module(name):
    """A build of the SIMD kernels, or a skip: not built, or built for instructions this
    CPU lacks (the AVX-512 build is compiled everywhere but imported only where it runs)."""
    import os
    import platform
    from native.loader import LIB_DIR, cpu_flags, load, missing_isa
    if name.endswith("_avx512") and "avx512f" not in cpu_flags():
        if platform.machine() not in ("x86_64", "AMD64"):
            pytest.skip("AVX-512 build: not an x86-64 machine")
        built = [f for f in os.listdir(LIB_DIR) if f.startswith(name + ".")] if os.path.isdir(LIB_DIR) else []
        assert built, f"{name} was not compiled (native/build.sh builds it wherever GCC knows -mavx512f)"
        pytest.skip(f"{name}: compiled, not run (this CPU has no AVX-512)")
    mod, why = load(name)
    if why:
        pytest.skip(why)
    why = missing_isa(mod)
    if why:
        pytest.skip(why)
    return mod


def module_generator(mod):
    from native.pygen import NativeGenerator

    def make(cfg):
        return NativeGenerator(cfg, mod.Rollout(cfg.n_envs, cfg.seed, cfg.policy == "egreedy",
                                                cfg.epsilon, cfg.workers))
    return make


@pytest.mark.parametrize("name", SIMD_MODULES)
def test_vector_trig_matches_glibc(name):
    """vtrig.hpp's sin/cos (with its glibc fallback) gives glibc's bits, on 8 million values."""
    mod = simd_module(name)
    for lo, hi in [(-0.3, 0.3), (-0.5, 0.5), (-1e-3, 1e-3), (-0.7, 0.7)]:
        bad, fallbacks = mod.trig_check(lo, hi, 1_000_000)
        assert bad == 0, f"{name}: {bad} sin/cos values differ from glibc on [{lo}, {hi}]"
    bad, fallbacks = mod.trig_check(-0.21, 0.21, 100_000)
    if mod.BACKEND == "scalar":
        assert fallbacks == 200_000                       # glibc for every lane
    else:
        assert fallbacks < 0.1 * 200_000, "vector sin/cos should serve most of CartPole's angles"


@pytest.mark.parametrize("name", SIMD_MODULES)
def test_division_by_total_mass_is_exact(name):
    """dynamics_simd.hpp's x / 1.1 (a reciprocal multiply and one FMA correction on the
    vector backends) gives the IEEE quotient's bits."""
    mod = simd_module(name)
    assert mod.div_check(12345, 2_000_000) == 0


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", SIMD_RUNGS)
def test_simd_portable_build_verifies_and_equals_native(name, policy):
    """The scalar backend (baseline x86-64 build) verifies, and gives the native build's
    batch bit for bit: the same operations in the same order on every backend (v5c's
    network too: its partial sums are 8 lanes wide on AVX2 and scalar alike)."""
    rung(name)
    port = simd_module(MODULES[name] + "_portable")
    assert "scalar" in port.build_info()["kernel_isa"]
    n = 37
    got = run_generator(module_generator(port), config(n, policy, workers=2), T, CALLS)
    assert compare_batches(got, reference(n, policy), config(n, policy)) is None
    assert check_gymnasium(got, config(n, policy)) is None
    native = simd_module(MODULES[name])
    if native.BACKEND in ("avx2", "scalar"):
        nat = run_generator(module_generator(native), config(n, policy, workers=1), T, CALLS)
        for k in got:
            assert np.array_equal(got[k], nat[k]), f"{name}: {k} differs between backends"


@pytest.mark.parametrize("policy", POLICIES)
def test_avx512_build_verifies_where_it_runs(policy):
    mod = simd_module("_v5c_blocked_mlp_avx512")
    assert mod.BACKEND == "avx512"
    n = 37
    got = run_generator(module_generator(mod), config(n, policy, workers=2), T, CALLS)
    assert compare_batches(got, reference(n, policy), config(n, policy)) is None
    assert check_gymnasium(got, config(n, policy)) is None


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", SIMD_RUNGS)
def test_simd_blocks_and_tiles_agree(name, policy):
    """N=100 and 300: several 64-env tiles per thread, blocks on 4-, 16- or 64-env edges
    that move with the thread count, partial last tiles: the same batch for 1..4 threads."""
    v = rung(name)
    steps = 12
    for n in (100, 300):
        base = run_generator(v.make_generator, config(n, policy, workers=1), steps, 2)
        for w in (2, 3, 4):
            got = run_generator(v.make_generator, config(n, policy, workers=w), steps, 2)
            for k in base:
                assert np.array_equal(base[k], got[k]), f"{name} N={n}: {k} differs between 1 and {w} threads"
        assert check_gymnasium(base, config(n, policy)) is None
        if policy == "random":
            ref = run_generator(PythonGenerator, config(n, policy), steps, 2)
            assert compare_batches(base, ref, config(n, policy)) is None


@pytest.mark.parametrize("name", ["_v5b_simd_portable", "_v5c_blocked_mlp", "_v5c_blocked_mlp_portable",
                                  "_v5c_blocked_mlp_avx512"])
def test_simd_steppers_equal_v4s(name):
    """RungVectorEnv's whole step (stepper_simd.hpp) of every SIMD build against v4's
    (stepper.hpp, cartpole::step per env), bit for bit, with resets and truncations."""
    mod = simd_module(name)
    from native.loader import load
    v4, why = load("_v4_cpp")
    if why:
        pytest.skip(why)
    r = np.random.default_rng(7)
    n = 203
    state = r.uniform(-0.2, 0.2, (4, n)) * np.array([[10.0], [4.0], [1.0], [8.0]])
    episode = r.integers(0, 5, n)
    elapsed = r.integers(495, 500, n)
    k_reset = r.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64)
    runs = {}
    for tag, m, kw in (("v4", v4, {}), (name, mod, {"threads": 2})):
        st, ep, el = state.copy(), episode.copy(), elapsed.copy()
        out = []
        for step in range(4):
            a = r.integers(0, 2, n) if tag == "v4" else runs["v4"][1][step]
            obs, fo = np.zeros((n, 4), np.float32), np.zeros((n, 4), np.float32)
            te, tr = np.zeros(n, bool), np.zeros(n, bool)
            ended = m.step_autoreset(st, ep, el, k_reset, a, 500, obs, te, tr, fo, **kw)
            out.append((a, ended, obs, fo, te, tr, st.copy(), ep.copy(), el.copy()))
        runs[tag] = (out, [o[0] for o in out])
    for want, got in zip(runs["v4"][0], runs[name][0]):
        for x, y in zip(want[1:], got[1:]):
            np.testing.assert_array_equal(x, y)
    assert sum(o[1] for o in runs["v4"][0]) > 0


def test_v5c_network_matches_v4s_on_a_real_batch():
    """v5c's blocked network against v4's scalar one on 4096 observations of an egreedy
    rollout: the same greedy actions except at near-ties (they sum layer 3 in another order)."""
    from versions.cartpole.common.verify import TIE_TOL, q_values64
    rung("v5c_blocked_mlp")
    rung("v4_cpp")
    w = init_weights(0)
    g = rung("v4_cpp").make_generator(GenConfig(n_envs=4096, seed=0, policy="egreedy", weights=w))
    obs = np.ascontiguousarray(g.generate(3)["obs"].reshape(-1, 4))
    a4, a5 = np.empty(len(obs), np.int64), np.empty(len(obs), np.int64)
    g.core.greedy_batch(obs, a4)
    c = native_core("v5c_blocked_mlp", 64, True, threads=2)
    c.set_weights(w["w1"], w["b1"], w["w2"], w["b2"], w["w3"], w["b3"])
    c.greedy_batch(obs, a5)
    q = q_values64(w, obs)
    differ = a4 != a5
    assert (np.abs(q[differ, 1] - q[differ, 0]) < TIE_TOL).all()
    assert differ.mean() < 1e-3


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
