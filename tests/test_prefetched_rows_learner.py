"""L4f (learners/l4f_prefetched_rows): L4c's chess update with a per-row phase and a layer-1
backward that prefetch and block what they read. Its weights (policy and target) and losses
equal L4c's bit for bit at the contract's settings, at a recipe's (H 48, B 2048: the
narrowest layer-1 tail) and at widths that leave 1..7 vectors in layer 1's tail, at 1, 2 and
3 threads, with the tests-only mutations too; it passes the chess learner checks, and a
broken variant of it does not. L4g (the same phases under L4e's lazy AdamW) and the learners
built on L4f's phases (L4h-L4s) take every test too."""
import pytest

from core.discover import reference_learner
from tests.helpers import assert_equal_traces, chess_trace, learner_or_skip

NAMES = ("l4f_prefetched_rows", "l4g_lazy_prefetched", "l4h_balanced_back1", "l4i_sparse_layer2",
         "l4j_lazy_sparse", "l4k_owned_rows", "l4m_rows_out",
         "l4n_compressed_legal", "l4o_folded_argmax", "l4p_narrow_layer1",
         "l4q_tight_items", "l4r_lean_block", "l4s_flags_once")   # the learners with L4f's phases
RECIPE = dict(hidden=48, batch_size=2048, gamma=0.9, lr=1e-3, target_period=32)


@pytest.fixture(scope="module", params=NAMES)
def fast(request):
    return learner_or_skip(request.param)


def _mutate(monkeypatch, mutation):
    """The tests-only mutation on L4c's Python class and on L4e's (which sets its own)."""
    from learners.l4c_native_chess.learner import ChessRoundLearner
    from learners.l4e_lazy_adamw.learner import LazyChessLearner
    for cls in (ChessRoundLearner, LazyChessLearner):
        monkeypatch.setattr(cls, "mutation", mutation)


@pytest.mark.parametrize("settings,checkpoints", [
    ({}, (1, 7, 50, 140)),                              # the contract: H 256, B 64, a copy at 128
    (RECIPE, (1, 7, 40)),                               # a8's settings: copies every 32
    (dict(hidden=17, batch_size=33, target_period=5), (1, 12)),    # odd sizes: tails of rows and tiles
    (dict(hidden=100, batch_size=70, double=False), (1, 9)),       # the target net's argmax
    (dict(hidden=8, batch_size=40, target="soft", tau=0.3), (1, 6)),
], ids=["contract", "recipe", "odd", "single", "soft"])
def test_weights_equal_l4c_bit_for_bit(fast, l4c_learner, chess_replay, settings, checkpoints):
    from versions.chess.common.learn_verify import chess_config
    ref, _ = chess_trace(l4c_learner, chess_config(seed=2 ** 64 - 1, threads=1, **settings), chess_replay, checkpoints)
    for threads in (1, 2, 3):
        got, _ = chess_trace(fast, chess_config(seed=2 ** 64 - 1, threads=threads, **settings), chess_replay, checkpoints)
        assert_equal_traces(got, ref, checkpoints)


@pytest.mark.parametrize("mutation", [1, 2], ids=["huber_beta_2", "no_legal_mask"])
def test_mutations_take_the_same_path_as_l4c(fast, l4c_learner, chess_replay, monkeypatch, mutation):
    """The tests-only mutations reach rows() and targets() (beta, the unmasked argmax): the
    two learners, mutated alike, still agree bit for bit, and differ from the unmutated."""
    from versions.chess.common.learn_verify import chess_config
    cfg = chess_config(seed=3, threads=2, hidden=24, batch_size=96)
    clean, _ = chess_trace(fast, cfg, chess_replay, (5,))
    _mutate(monkeypatch, mutation)
    ref, _ = chess_trace(l4c_learner, cfg, chess_replay, (5,))
    got, _ = chess_trace(fast, cfg, chess_replay, (5,))
    assert_equal_traces(got, ref, (5,))
    assert not (clean[0][2] == got[0][2]).all(), "the mutation changed nothing: the test cannot tell"


def test_passes_the_chess_learner_checks(fast):
    from versions.chess.common.learn_verify import ChessLearnerVerifier
    out = ChessLearnerVerifier(reference_learner(), seeds=(0,)).verify(fast)
    bad = [f"[{o.check}] {o.case}: {o.detail}" for o in out if not o.ok]
    assert out and not bad, "\n".join(bad)


def test_a_broken_variant_fails_the_chess_checks(fast, monkeypatch):
    from versions.chess.common import learn_verify
    monkeypatch.setattr(learn_verify, "K", 10)
    _mutate(monkeypatch, 2)                                      # the argmax over every action
    out = learn_verify.ChessLearnerVerifier(reference_learner(), seeds=(0,)).verify(fast)
    assert any(not o.ok for o in out), "a learner that ignores the legal mask passed"
