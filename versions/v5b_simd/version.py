"""v5b_simd: v5 with the work of a step done for a tile of environments: vectorised dynamics, blocked AVX-512 network."""
NUMBER = "5b"
TITLE = "C++, OpenMP + SIMD"
SUMMARY = ("v5 over tiles of environments: SoA float64 dynamics and exact vector sin/cos "
           "across environments, egreedy network as register-blocked AVX-512 matrix products")
PARALLEL = "threads"
SERIAL_BASE = "v4_cpp"   # the serial rung the report's crossover compares it with
MODULE = "_v5b_simd"
VERIFY_WORKERS = (1, 2, 3, 4)
MAX_WORKERS = 64
EXTRA_SOURCES = ("native/CMakeLists.txt", "native/pygen.py", "native/loader.py")


def available():
    from native.loader import available as avail
    return avail(MODULE)


def build_info():
    from native.loader import build_info as info
    return info(MODULE)


def _core(n_envs, egreedy, seed=0, epsilon=0.1, threads=1):
    from native.loader import require
    return require(MODULE, threads, MAX_WORKERS).Rollout(n_envs, seed, egreedy, epsilon, threads)


def make_stepper(n_envs, workers=1):
    """RungVectorEnv's stepper: one step of N envs with the caller's actions, 8 envs per
    AVX-512 instruction (the dynamics and sin/cos of generate()), counters, same-step
    resets and observations in one native call; `workers` OpenMP threads for N >= 4096."""
    from native.loader import require
    from versions.common.vector_env import NativeStepper
    return NativeStepper(require(MODULE, workers, MAX_WORKERS), n_envs, threads=workers)


def make_generator(cfg):
    from native.pygen import NativeGenerator
    return NativeGenerator(cfg, _core(cfg.n_envs, cfg.policy == "egreedy", cfg.seed, cfg.epsilon,
                                      cfg.workers))


def micro_step(n_envs):
    from native.pygen import micro_step_of
    return micro_step_of(_core)(n_envs)


def micro_forward(n_envs):
    from native.pygen import micro_forward_of
    return micro_forward_of(_core)(n_envs)
