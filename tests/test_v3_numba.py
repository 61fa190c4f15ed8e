"""v3_numba / v3b_numba_parallel: thread counts, set_weights, clear errors."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")

from core.api import GenConfig, StudyError, balancing_weights, init_weights  # noqa: E402
from versions.cartpole.common.verify import compare_batches, run_generator  # noqa: E402
from versions.cartpole.common.cartpole import ARRAY_NAMES  # noqa: E402
from versions.cartpole.v1_python.rollout import PythonGenerator  # noqa: E402
from versions.cartpole.v3_numba.rollout import NumbaGenerator  # noqa: E402
from versions.cartpole.v3b_numba_parallel import version as v3b  # noqa: E402
from tests.helpers import copy_batch  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("policy", ["random", "egreedy"])
def test_threads_give_the_serial_batch(policy):
    import numba
    kw = dict(n_envs=7, seed=11, policy=policy, epsilon=0.2)
    serial = run_generator(NumbaGenerator, GenConfig(**kw), 40, 2)
    assert compare_batches(serial, run_generator(PythonGenerator, GenConfig(**kw), 40, 2),
                           GenConfig(**kw)) is None
    for threads in range(1, numba.config.NUMBA_NUM_THREADS + 1):
        par = run_generator(v3b.make_generator, GenConfig(workers=threads, **kw), 40, 2)
        for k in ARRAY_NAMES:
            assert np.array_equal(par[k], serial[k]), f"threads={threads}: {k}"


def test_more_threads_than_numba_allows_is_a_clear_error():
    import numba
    with pytest.raises(StudyError, match="NUMBA_NUM_THREADS"):
        v3b.make_generator(GenConfig(n_envs=4, workers=numba.config.NUMBA_NUM_THREADS + 1))


CHILD = """
import sys
sys.path.insert(0, {root!r})
import numpy as np
from core.api import GenConfig
from versions.cartpole.common.verify import run_generator
from versions.cartpole.v3b_numba_parallel import version as v3b
kw = dict(n_envs=5, seed=2, policy="egreedy", epsilon=0.3)
ref = run_generator(v3b.make_generator, GenConfig(workers=1, **kw), 30, 2)
for w in (2, 3, 4):     # more threads than environments per thread, and than cores
    got = run_generator(v3b.make_generator, GenConfig(workers=w, **kw), 30, 2)
    assert all(np.array_equal(got[k], ref[k]) for k in ref), w
print("ok")
"""


def test_four_threads_in_a_fresh_process():
    env = dict(os.environ, NUMBA_NUM_THREADS="4")
    p = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT))], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr[-2000:]


def test_set_weights_takes_effect():
    a, b = init_weights(4), balancing_weights()
    kw = dict(n_envs=6, seed=3, policy="egreedy", epsilon=0.05)
    gens = [NumbaGenerator(GenConfig(weights=a, **kw)),
            v3b.make_generator(GenConfig(weights=a, workers=2, **kw))]
    ref = PythonGenerator(GenConfig(weights=a, **kw))
    cfg_b = GenConfig(weights=b, **kw)
    for w in (None, b, b):
        if w is not None:
            ref.set_weights(w)
            for g in gens:
                g.set_weights(w)
        r = copy_batch(ref.generate(25), ARRAY_NAMES)
        for g in gens:
            got = copy_batch(g.generate(25), ARRAY_NAMES)
            assert compare_batches(got, r, cfg_b if w is not None else GenConfig(weights=a, **kw)) is None
    fresh = run_generator(NumbaGenerator, cfg_b, 25, 1)
    g = NumbaGenerator(GenConfig(weights=a, **kw))
    g.set_weights(b)
    swapped = copy_batch(g.generate(25), ARRAY_NAMES)
    plain = run_generator(NumbaGenerator, GenConfig(weights=a, **kw), 25, 1)
    for k in ARRAY_NAMES:
        assert np.array_equal(swapped[k], fresh[k]), k
    assert not np.array_equal(swapped["action"], plain["action"])
