"""L4e (learners/l4e_lazy_adamw): L4c's chess update with AdamW applied by row when the row
is next read, written or exported; L4g (learners/l4g_lazy_prefetched), the same over L4f's
per-row phase, takes every test of the lazy update too. Its weights (policy and target) and losses equal L4c's bit
for bit at the contract's settings and at a recipe's, across target copies, at 1, 2 and 3
threads; it passes the chess learner checks; LazyAdam (zero-gradient steps skipped) does not
equal L4c."""
import numpy as np
import pytest

from core.discover import get_learner, reference_learner
from tests.helpers import assert_equal_traces as _assert_equal_traces, chess_trace as _trace, learner_or_skip, same_weights as _same

NAME = "l4e_lazy_adamw"
LAZY = (NAME, "l4g_lazy_prefetched", "l4j_lazy_sparse", "l4k_owned_rows")   # the learners with L4e's lazy AdamW
CHECKPOINTS = (1, 7, 50, 300)
RECIPE = dict(hidden=128, batch_size=2048, gamma=0.9, lr=5e-4, target_period=32)


@pytest.fixture(scope="module", params=LAZY)
def lazy(request):
    return learner_or_skip(request.param)


@pytest.fixture(scope="module")
def l4e():
    return learner_or_skip(NAME)


@pytest.mark.parametrize("settings,checkpoints", [
    ({}, CHECKPOINTS),                                  # the contract: H 256, B 64, copies at 128, 256
    (RECIPE, (1, 7, 50, 100)),                          # a recipe's: copies every 32
], ids=["contract", "recipe"])
def test_weights_equal_l4c_bit_for_bit(lazy, l4c_learner, chess_replay, settings, checkpoints):
    from versions.chess.common.learn_verify import chess_config
    ref, _ = _trace(l4c_learner, chess_config(seed=2 ** 64 - 1, threads=1, **settings), chess_replay, checkpoints)
    for threads in (1, 2, 3):
        cfg = chess_config(seed=2 ** 64 - 1, threads=threads, **settings)
        got, impl = _trace(lazy, cfg, chess_replay, checkpoints)
        _assert_equal_traces(got, ref, checkpoints)
        c = impl.counts()
        assert 0 < c["rows_written"] and 0 < c["row_steps_full"], c
    # one run straight to the end: no export in between, so rows wait across both copies
    straight, impl = _trace(lazy, chess_config(seed=2 ** 64 - 1, threads=1, **settings), chess_replay, checkpoints[-1:])
    _assert_equal_traces(straight, ref[-1:], checkpoints[-1:])
    assert not _same(ref[-1][1], ref[-1][0])            # the target lags the policy at the end


@pytest.mark.parametrize("kw", [dict(grad_clip=0.01), dict(target="soft", tau=0.05), dict(target="soft", tau=0.7),
                                dict(double=False), dict(weight_decay=0.1, target_period=3),
                                dict(hidden=100, batch_size=37, target_period=5)],
                         ids=["clip", "soft", "soft-high-tau", "no-double", "decay", "odd-sizes"])
def test_other_settings_equal_l4c_bit_for_bit(lazy, l4c_learner, chess_replay, kw):
    from versions.chess.common.learn_verify import chess_config
    cps = (3, 20)
    ref, _ = _trace(l4c_learner, chess_config(seed=7, threads=1, **kw), chess_replay, cps)
    got, _ = _trace(lazy, chess_config(seed=7, threads=2, **kw), chess_replay, cps)
    _assert_equal_traces(got, ref, cps)


@pytest.mark.parametrize("kw", [dict(beta1=0.1), dict(beta1=0.1, beta2=0.1), dict(beta1=0.0, weight_decay=0.05)],
                         ids=["m-underflows", "m-and-v-underflow", "beta1-0-decay"])
def test_rows_whose_moments_reach_zero_equal_l4c(lazy, l4c_learner, chess_replay, kw):
    """Small betas flush m (and v) to +0 within tens of steps, so the replay's shortcuts
    (multiplications alone; nothing but the copy) run, and still give L4c's bits."""
    from versions.chess.common.learn_verify import chess_config
    cps = (40, 120)
    ref, _ = _trace(l4c_learner, chess_config(seed=11, target_period=16, **kw), chess_replay, cps)
    got, impl = _trace(lazy, chess_config(seed=11, target_period=16, **kw), chess_replay, cps)
    _assert_equal_traces(got, ref, cps)
    c = impl.counts()
    assert c["rows_m_zeroed"] > 0 and (c["row_steps_mult"] > 0 or kw.get("beta2", 0.999) < 0.5), c


def test_set_lr_between_calls_equals_l4c(lazy, l4c_learner, chess_replay):
    """A schedule changes lr between learn calls: replayed steps keep their own step's lr."""
    from versions.chess.common.learn_verify import chess_config
    res = []
    for lr in (l4c_learner, lazy):
        impl = lr.make(chess_config(seed=3, target_period=16), chess_replay)
        impl.learn(10)
        impl.set_lr(1e-3)
        impl.learn(25)
        res.append((impl.weights(), impl.target_weights()))
    assert _same(res[0][0], res[1][0]) and _same(res[0][1], res[1][1])


def test_lazy_adam_does_not_equal_l4c(lazy, l4c_learner, chess_replay):
    """Skipping the zero-gradient steps (mutation 3, tests only) is another algorithm."""
    from learners.l4e_lazy_adamw.learner import LazyChessLearner
    from versions.chess.common.learn_verify import chess_config
    cfg = chess_config(seed=0, threads=1)
    ref, _ = _trace(l4c_learner, cfg, chess_replay, (10,))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(LazyChessLearner, "mutation", 3)
        got, _ = _trace(lazy, cfg, chess_replay, (10,))
    assert not _same(got[0][0], ref[0][0])
    exact, _ = _trace(lazy, cfg, chess_replay, (10,))
    assert _same(exact[0][0], ref[0][0])


def test_passes_the_chess_learner_checks(lazy):
    from versions.chess.common.learn_verify import ChessLearnerVerifier
    out = ChessLearnerVerifier(reference_learner(), seeds=(0,)).verify(lazy)
    bad = [f"[{o.check}] {o.case}: {o.detail}" for o in out if not o.ok]
    assert len(out) == 5 and not bad, "\n".join(bad)


def test_lazy_adam_fails_the_chess_checks(lazy, monkeypatch):
    from learners.l4e_lazy_adamw.learner import LazyChessLearner
    from versions.chess.common import learn_verify
    monkeypatch.setattr(learn_verify, "K", 10)
    monkeypatch.setattr(LazyChessLearner, "mutation", 3)
    out = learn_verify.ChessLearnerVerifier(reference_learner(), seeds=(0,)).verify(lazy)
    assert any(not o.ok for o in out), "the chess checks passed LazyAdam"


def test_floor_counts_fewer_bytes_than_l4c_and_refuses_bad_input(l4e, capsys):
    from learners.l4e_lazy_adamw import floor
    from training.cost import TIMING_ROWS
    assert floor.REPLAY_ROWS == TIMING_ROWS
    c = floor.counts_per_update(256, 64, 2)
    f = floor.floor(c, 2 * floor.U)
    assert 0 < f["rows_touched"] < f["sparse_rows"] and f["rows_written"] > 0
    assert f["dense_bytes"] < f["bytes"] < f["l4c_bytes"] == 24 * 1_594_432
    for argv in (["--rounds", "0"], ["--hidden", "5000"], ["--batch-size", "-1"], ["--rounds", "x"], ["--nope"]):
        try:
            rc = floor.main(argv)
        except SystemExit as e:
            rc = e.code
        assert rc == 2
        err = capsys.readouterr().err.strip()
        assert err and "\n" not in err, err


def test_compare_runs_both_learners_and_refuses_bad_input(l4e, l4c_learner, capsys):
    from learners.l4e_lazy_adamw import compare
    from versions.chess.common.learn_verify import chess_config
    res = compare.compare(chess_config(), warm=2, samples=1, out=lambda _: None)
    assert res["equal"] and all(res[n]["update"]["median"] > 0 for n in compare.NAMES)
    for argv in (["--samples", "0"], ["--hidden", "0"], ["--threads", "65"], ["--lr", "2"], ["--warm", "x"]):
        try:
            rc = compare.main(argv)
        except SystemExit as e:
            rc = e.code
        assert rc == 2
        err = capsys.readouterr().err.strip()
        assert err and "\n" not in err, err


def test_bad_input_is_refused_in_one_line(lazy, capsys, tmp_path):
    from core.errors import StudyError
    from core.learner import LearnConfig
    from harness.__main__ import main
    from training.fixture import fixed_replay as cartpole_replay
    from versions.chess.common.learn import fixed_replay
    from versions.chess.common.learn_verify import chess_config
    for cfg, rp in ((LearnConfig(), cartpole_replay()), (chess_config(threads=65), fixed_replay())):
        with pytest.raises(StudyError) as e:
            lazy.make(cfg, rp)
        assert "\n" not in str(e.value)
    bad = fixed_replay()
    bad.data = bad.data.copy()
    bad.data[:, 99] = 4672                      # an action outside the 8x8x73 space
    impl = lazy.make(chess_config(), bad)
    with pytest.raises(StudyError) as e:
        impl.learn(3)
    assert "action" in str(e.value) and impl.updates == 0
    assert main(["learn", "--learner", lazy.name, "--updates", "2", "--out", str(tmp_path / "x.npz")]) == 2
    err = capsys.readouterr().err.strip()
    assert err and "\n" not in err and "chess" in err
