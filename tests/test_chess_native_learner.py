"""L4c (learners/l4c_native_chess): chess's network in a native round. It passes the chess
learner checks (LEARNER.md, "Another workload's network"), a deliberately broken variant
of it does not (at a small K, quicker), thread counts do not change a bit, bad input is one line."""
import numpy as np
import pytest

from core.discover import get_learner, reference_learner
from core.errors import StudyError
from core.learner import LearnConfig

NAME = "l4c_native_chess"
K_SMALL = 10


@pytest.fixture(scope="module")
def learner():
    lr = get_learner(NAME)
    why = lr.unavailable_reason()
    if why:
        pytest.skip(f"{NAME}: {why}")
    return lr


@pytest.fixture(scope="module")
def verifier():
    from versions.chess.common.learn_verify import ChessLearnerVerifier
    return ChessLearnerVerifier(reference_learner(), seeds=(0,))


@pytest.fixture
def small_k(monkeypatch):
    from versions.chess.common import learn_verify
    monkeypatch.setattr(learn_verify, "K", K_SMALL)


def test_passes_the_chess_learner_checks(learner, verifier):
    out = verifier.verify(learner)                   # K = 50, against the reference's forms
    bad = [f"[{o.check}] {o.case}: {o.detail}" for o in out if not o.ok]
    assert len(out) == 5 and not bad, "\n".join(bad)


@pytest.mark.parametrize("mutation,what", [(1, "Huber beta 2"), (2, "no legal mask"),
                                           (3, "lazy AdamW: rows without gradient skipped")])
def test_a_broken_variant_fails_the_checks(learner, verifier, small_k, monkeypatch, mutation, what):
    from learners.l4c_native_chess.learner import ChessRoundLearner
    monkeypatch.setattr(ChessRoundLearner, "mutation", mutation)
    out = verifier.verify(learner)
    assert any(not o.ok for o in out), f"the chess checks passed a learner with {what}"


@pytest.mark.parametrize("kw", [dict(grad_clip=0.01), dict(target="soft", tau=0.05), dict(double=False),
                                dict(weight_decay=0.1, target_period=3), dict(hidden=100, batch_size=37)],
                         ids=["clip", "soft", "no-double", "decay", "odd-sizes"])
def test_other_settings_agree_with_the_reference(learner, kw):
    """The paths the default checks do not take, against L1 over a few updates."""
    from core.learner import LOSS_RTOL, TOL_FIRST, max_diff
    from versions.chess.common.learn_verify import DISPLACEMENT_RTOL, chess_config, displacement_diff, run
    cfg = chess_config(seed=7, device="cpu", **kw)
    got, ref = run(learner, cfg, 5), run(reference_learner(), cfg, 5)
    assert max_diff(got["first"], ref["first"]) <= TOL_FIRST
    assert displacement_diff(got["weights"], ref["weights"], ref["init"]) <= DISPLACEMENT_RTOL
    assert np.all(np.abs(got["losses"] - ref["losses"]) <= LOSS_RTOL * np.abs(ref["losses"]))


def _weights_after(learner, threads, updates=6):
    from versions.chess.common.learn import fixed_replay
    from versions.chess.common.learn_verify import chess_config
    from versions.chess.common.net import init_weights
    impl = learner.make(chess_config(seed=2 ** 64 - 1, threads=threads, target_period=4), fixed_replay())
    losses = np.zeros(updates, np.float32)
    impl.learn(updates, losses)
    return impl.weights(), impl.target_weights(), losses, init_weights


def test_thread_counts_give_identical_bits(learner):
    w1, t1, l1, init_weights = _weights_after(learner, 1)
    for threads in (2, 3):
        w, t, losses, _ = _weights_after(learner, threads)
        assert np.array_equal(losses, l1)
        assert all(np.array_equal(w[k], w1[k]) and np.array_equal(t[k], t1[k]) for k in w1)
    init = init_weights(2 ** 64 - 1)
    assert not np.array_equal(t1["w3"], init["w3"])               # the target copied at update 4 ...
    assert not np.array_equal(t1["w3"], w1["w3"])                 # ... and the policy moved on
    assert np.all(np.isfinite(l1)) and np.any(l1 > 0)


def _one_line(e: StudyError, *words):
    text = str(e)
    assert "\n" not in text and all(w in text for w in words), text


def test_bad_input_is_refused_in_one_line(learner):
    from training.fixture import fixed_replay as cartpole_replay
    from versions.chess.common.learn import ChessReplay, fixed_replay
    from versions.chess.common.learn_verify import chess_config
    with pytest.raises(StudyError) as e:
        learner.make(LearnConfig(), cartpole_replay())
    _one_line(e.value, "chess", "CartPole")
    with pytest.raises(StudyError) as e:
        learner.make(chess_config(threads=65), fixed_replay())
    _one_line(e.value, "threads")
    with pytest.raises(StudyError) as e:
        learner.make(chess_config(), ChessReplay(4)).learn(1)
    _one_line(e.value, "empty")
    bad = fixed_replay()
    bad.data = bad.data.copy()
    bad.data[:, 99] = 4672                      # an action outside the 8x8x73 space
    impl = learner.make(chess_config(), bad)
    with pytest.raises(StudyError) as e:
        impl.learn(3)
    _one_line(e.value, "action")
    assert impl.updates == 0
    with pytest.raises(StudyError) as e:
        learner.make(chess_config(), fixed_replay()).learn(4, np.zeros(2, np.float32))
    _one_line(e.value, "losses")


def test_learn_command_refuses_cartpole_in_one_line(learner, capsys, tmp_path):
    from harness.__main__ import main
    assert main(["learn", "--learner", NAME, "--updates", "2", "--out", str(tmp_path / "x.npz")]) == 2
    err = capsys.readouterr().err.strip()
    assert err and "\n" not in err and "chess" in err
