"""The work a rung executes (issue: a roof above 100% tells nothing): v5c counts the network's
multiply-adds it runs (ReLU zeros skipped, explored transitions without a forward), the
generator reports them per transition, and the bench's row carries them; a rung that does
not count reports nothing, and the report falls back to the dense count, labelled."""
import numpy as np
import pytest

from core.api import GenConfig, init_weights
from core.discover import get_rung
from core.measure import time_generator
from core.spec import NET

DENSE = NET.forward_flops()          # 34,304 at H=128


def v5c():
    r = get_rung("v5c_blocked_mlp")
    why = r.unavailable_reason()
    if why:
        pytest.skip(why)
    return r


def test_v5c_counts_less_than_the_dense_network_and_nothing_when_exploring():
    r = v5c()
    w = init_weights(3)
    gen = r.make_generator(GenConfig(n_envs=64, seed=3, policy="egreedy", epsilon=0.0, weights=w))
    gen.generate(16)
    got = gen.work()
    assert got["transitions"] == 64 * 16
    per = got["flops"] / got["transitions"]
    # layers 1 and 3 always run (6 H multiply-adds); layer 2 runs over the live inputs only
    assert 2 * 6 * 128 < per < DENSE
    gen.set_epsilon(1.0)                 # every transition explores: no forward at all
    gen.set_weights(w)                   # resets the count
    gen.generate(16)
    assert gen.work()["flops"] == 0
    gen.close()
    rnd = r.make_generator(GenConfig(n_envs=8, seed=3, policy="random"))
    rnd.generate(4)
    assert rnd.work() is None
    rnd.close()


def test_the_bench_row_carries_the_executed_work_only_where_the_rung_counts_it():
    r = v5c()
    w = init_weights(0)
    row = time_generator(lambda: r.make_generator(GenConfig(n_envs=32, seed=0, policy="egreedy",
                                                            epsilon=0.1, weights=w)),
                         32, 8, budget_s=0.05, min_repeats=2)
    assert 0 < row["executed_flops_per_transition"] < DENSE
    v4 = get_rung("v4_cpp")
    if v4.unavailable_reason() is None:
        row = time_generator(lambda: v4.make_generator(GenConfig(n_envs=8, seed=0, policy="egreedy",
                                                                 weights=w)), 8, 4, budget_s=0.05, min_repeats=2)
        assert "executed_flops_per_transition" not in row
