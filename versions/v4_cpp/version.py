"""v4_cpp: the rollout in serial C++ (nanobind module _v4_cpp, built by native/build.sh)."""
NUMBER = "4"
TITLE = "C++"
SUMMARY = "Serial C++: one native call runs all T steps of all N environments into reused NumPy arrays"
PARALLEL = None
MODULE = "_v4_cpp"
EXTRA_SOURCES = ("native/CMakeLists.txt", "native/pygen.py", "native/loader.py")


def available():
    from native.loader import available as avail
    return avail(MODULE)


def build_info():
    from native.loader import build_info as info
    return info(MODULE)


def _core(n_envs, egreedy, seed=0, epsilon=0.1):
    from native.loader import require
    return require(MODULE).Rollout(n_envs, seed, egreedy, epsilon)


def make_stepper(n_envs):
    """RungVectorEnv's stepper: one serial C++ step of N envs with the caller's actions
    (cartpole::step), counters, same-step resets and observations in one native call."""
    from native.loader import require
    from versions.common.vector_env import NativeStepper
    return NativeStepper(require(MODULE), n_envs)


def make_generator(cfg):
    from native.pygen import NativeGenerator
    return NativeGenerator(cfg, _core(cfg.n_envs, cfg.policy == "egreedy", cfg.seed, cfg.epsilon))


def micro_step(n_envs):
    from native.pygen import micro_step_of
    return micro_step_of(_core)(n_envs)


def micro_forward(n_envs):
    from native.pygen import micro_forward_of
    return micro_forward_of(_core)(n_envs)
