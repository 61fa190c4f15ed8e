"""The learner contract (LEARNER.md): discovery, the counter-based sampling and
initialisation, verification of every learner against the reference, and a broken
learner that verification must catch."""
import numpy as np
import pytest

from core import rng
from core.api import init_weights
from core.discover import learners, reference_learner
from core.learner import LearnConfig, Learner
from core.replay import Replay, sample_indices
from harness.learner_verify import K, LearnerVerifier, run_learner

LEARNERS = learners()


def test_exactly_one_reference_and_no_broken_folder():
    assert [x.name for x in LEARNERS if x.reference] == [reference_learner().name]
    assert not [x.error for x in LEARNERS if x.error]


def test_sample_indices_are_the_documented_formula():
    seed, size, B = 2 ** 64 - 1, 10_240, 64
    idx = sample_indices(seed, 5, 3, B, size)
    assert idx.shape == (3, B) and idx.dtype == np.int64
    for u in range(3):
        for j in (0, 17, B - 1):
            d = rng.draw(seed, rng.SAMPLE, 5 + u, j)
            assert idx[u, j] == ((d >> 32) * size) >> 32
    assert idx.min() >= 0 and idx.max() < size
    assert (sample_indices(3, 0, 50, 64, 1) == 0).all()        # a buffer of one row


def test_init_weights_is_the_documented_formula_and_check_values():
    w = init_weights(0)
    assert w["w1"].shape == (128, 4) and w["b3"].shape == (2,)
    u = rng.u01(rng.draw(0, rng.INIT, 0, 1))                    # w1[0, 1]
    assert w["w1"][0, 1] == np.float32((2 * u - 1) / np.sqrt(4.0))
    np.testing.assert_allclose(w["w1"][0], [-0.416028, 0.247701, 0.271085, -0.032358], atol=1e-6)
    np.testing.assert_allclose(w["b3"], [-0.006976, -0.011643], atol=1e-6)
    big = init_weights(2 ** 64 - 1)
    assert all(np.isfinite(v).all() for v in big.values())
    assert np.abs(big["w2"]).max() <= 1 / np.sqrt(128)


def test_replay_layout_and_wrap():
    r = Replay(8)
    T, N = 3, 2
    b = {"obs": np.arange(T * N * 4, dtype=np.float32).reshape(T, N, 4),
         "next_obs": -np.arange(T * N * 4, dtype=np.float32).reshape(T, N, 4),
         "action": np.array([[0, 1]] * T), "reward": np.ones((T, N), np.float32),
         "terminated": np.array([[False, True]] * T), "truncated": np.zeros((T, N), bool)}
    r.add(b)
    assert r.data[1, :4].tolist() == [4, 5, 6, 7]                # row t*N + i: t=0, i=1
    assert r.data[1, 8] == 1 and r.data[1, 10] == 1 and r.data[0, 10] == 0
    r.add(b)
    assert r.size == 8 and r.pos == 4 and r.data[0, :4].tolist() == [8, 9, 10, 11]


@pytest.mark.parametrize("learner", LEARNERS, ids=[x.name for x in LEARNERS])
def test_every_learner_verifies_against_the_reference(learner):
    why = learner.unavailable_reason()
    if why:
        pytest.skip(f"{learner.name}: {why}")
    if "cartpole" not in learner.workloads:     # e.g. l4c: its checks are the chess ones
        pytest.skip(f"{learner.name} does not train CartPole's network")
    ver = LearnerVerifier(reference_learner(), seeds=(0, 2 ** 64 - 1))
    out = ver.verify(learner)
    bad = [f"[{o.check}] {o.case}: {o.detail}" for o in out if not o.ok]
    assert out and not bad, "\n".join(bad)


def _broken(change):
    """The reference learner with one thing wrong."""
    ref = reference_learner()

    def make(cfg, replay):
        impl = ref.make(cfg, replay)
        change(impl)
        return impl
    return Learner(number="99", title="broken", summary="a deliberate bug", make=make,
                   name="l99_broken")


@pytest.mark.parametrize("what,change", [
    ("no Double DQN", lambda impl: setattr(impl.cfg, "double", False)),
    ("learning rate x1.01", lambda impl: impl.set_lr(impl.cfg.lr * 1.01)),
    ("other minibatch rows", lambda impl: setattr(impl, "updates", 1)),
    ("target copied every 64", lambda impl: setattr(impl.cfg, "target_period", 64)),
])
def test_verification_catches_a_broken_learner(what, change):
    ver = LearnerVerifier(reference_learner(), seeds=(0,))
    out = ver.verify(_broken(change))
    assert any(not o.ok for o in out), f"verification passed a learner with {what}"


def test_tolerances_sit_above_float32_noise():
    """The reference in float64 is within a tenth of the tolerances of the reference in
    float32 (LEARNER.md, "Why these tolerances")."""
    import torch
    from harness.learner_verify import TOL_FIRST, TOL_K, max_diff
    from training.fixture import fixed_replay
    ref = reference_learner()
    cfg = LearnConfig(seed=7, device="cpu")
    a = run_learner(ref, cfg, K, (1,))

    rep = fixed_replay()
    impl = ref.make(cfg, rep)
    impl.policy.double()
    impl.target.double()
    impl._pp, impl._tp = list(impl.policy.parameters()), list(impl.target.parameters())
    impl.opt = torch.optim.AdamW(impl._pp, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), eps=cfg.adam_eps,
                                 weight_decay=cfg.weight_decay)
    impl.data = torch.from_numpy(rep.data.astype(np.float64))
    impl.staging = [torch.empty((cfg.batch_size, rep.spec.width), dtype=torch.float64)]
    impl.learn(1)
    w1 = impl.weights()
    impl.learn(K - 1)
    wk = impl.weights()
    assert max_diff(w1, a["at"][1]) < TOL_FIRST / 10
    assert max_diff(wk, a["weights"]) < TOL_K / 10


def test_learn_command_writes_weights_and_losses(tmp_path):
    from harness.__main__ import main
    out = tmp_path / "l.npz"
    assert main(["learn", "--learner", reference_learner().name, "--updates", "5", "--seed",
                 str(2 ** 64 - 2), "--out", str(out)]) == 0
    with np.load(out) as z:
        assert z["losses"].shape == (5,) and np.isfinite(z["losses"]).all()
        assert z["w2"].shape == (128, 128) and z["w2"].dtype == np.float32


@pytest.mark.parametrize("argv,msg", [
    (["learn", "--learner", "l99_none", "--updates", "5", "--out", "x.npz"], "unknown learner"),
    (["learn", "--learner", "l1", "--updates", "0", "--out", "x.npz"], "--updates must be"),
    (["learn", "--learner", "l1", "--updates", "5", "--seed", str(2 ** 64), "--out", "x.npz"], "seed"),
    (["learn", "--learner", "l1", "--updates", "5", "--out", "/no/such/dir/x.npz"], "does not exist"),
])
def test_learn_bad_input_is_one_line(argv, msg, capsys):
    from harness.__main__ import main
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0], err


def test_the_recorded_worst_case_is_the_worst_seed_not_the_last():
    from core.workload import Outcome
    from harness.learner_verify import worst_by_check
    outs = [Outcome(True, "weights after 1 update", "seed 0", "max 3e-7", 3e-7),
            Outcome(True, "weights after 1 update", "seed 7", "max 9e-7", 9e-7),
            Outcome(True, "weights after 1 update", "seed 2", "max 1e-7", 1e-7),
            Outcome(True, "greedy actions on probes", "seed 0", "0 of 10", 0.0),
            Outcome(True, "greedy actions on probes", "seed 7", "0 of 12", 0.0)]
    w = worst_by_check(outs)
    assert w["weights after 1 update"] == "seed 7: max 9e-7"
    assert w["greedy actions on probes"] == "seed 0: 0 of 10"       # a tie keeps the first
