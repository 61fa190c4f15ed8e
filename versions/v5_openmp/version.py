"""v5_openmp: v4's rollout over OpenMP threads (nanobind module _v5_openmp)."""
NUMBER = "5"
TITLE = "C++, OpenMP"
SUMMARY = ("v4's loop with an OpenMP parallel region over contiguous, cache-line-aligned "
           "blocks of environments; --workers threads from a pool started once")
PARALLEL = "threads"
SERIAL_BASE = "v4_cpp"   # the serial rung the report's crossover compares it with
MODULE = "_v5_openmp"
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
