"""`python -m harness new NAME`: scaffold a rung (versions/cartpole/vK_name/) or a learner
(learners/lK_name/) that discovery finds, verification checks and the bench measures."""
from __future__ import annotations

from core import discover
from core.errors import StudyError


NEW_VERSION = '''"""{name}: describe the idea of this rung in one line."""
from core.rung import Rung


def make_generator(cfg):
    from .rollout import Generator
    return Generator(cfg)


RUNG = Rung(
    number="{number}", title="{title}",
    summary="TODO: what this rung changes relative to the one below",
    make_generator=make_generator,
    # parallel="threads", max_workers=..., verify_workers=(1, 2), serial_base="v4_cpp",
)
'''

NEW_ROLLOUT = '''"""{name}: the rollout. Fill in generate(); `python -m harness verify --version {name}`
tells you when it meets versions/cartpole/WORKLOAD.md (the contract)."""
from core.api import Generator as Base, GenConfig, empty_batch


class Generator(Base):
    def __init__(self, cfg: GenConfig):
        super().__init__(cfg)
        # TODO: N environments from the counter-based RNG (core/rng.py)

    def set_weights(self, weights):
        self.weights = weights

    def set_epsilon(self, epsilon):
        self.cfg.epsilon = epsilon

    def generate(self, T):
        # TODO: step every environment T times. Until then the batch is empty and
        # verification fails, as it should.
        return empty_batch(T, self.cfg.n_envs)
'''

NEW_LEARNER = '''"""{name}: describe the idea of this learner in one line."""
from core.learner import Learner


def make(cfg, replay):
    from .impl import MyLearner
    return MyLearner(cfg, replay)


LEARNER = Learner(
    number="{number}", title="{title}",
    summary="TODO: what this learner changes relative to the one below",
    make=make,
)
'''

NEW_LEARNER_IMPL = '''"""{name}: the update. `python -m harness verify-learners --learner {name}` tells you when
it meets LEARNER.md at the top of the repository (the contract). This starting point
reuses the reference learner's code, so it verifies; change one thing at a time."""
from learners.l1_torch_eager.torch_eager import TorchLearner


class MyLearner(TorchLearner):
    pass
'''

NEW_NOTES = '''# {name}

What changed since the rung below, and why it is (or is not) faster: 5-15 lines.
Cite the report's rows (`make bench`) rather than copying numbers, and say where the time
goes (profiled).
'''


def cmd_new(args):
    import re
    name = args.name
    if not isinstance(name, str) or len(name) > 64 \
            or not re.fullmatch(r"[vl](\d+)([a-z]?)_[a-z0-9_]+", name, flags=re.ASCII):
        raise StudyError(f"name must look like v9_mine (a rung) or l9_mine (a learner): a letter v "
                         f"or l, a number, an optional letter, _, lower-case words (at most 64 "
                         f"characters); got {name!r}")
    m = re.fullmatch(r"[vl](\d+)([a-z]?)_.*", name, flags=re.ASCII)
    number = m.group(1) + m.group(2)
    kind = "rung" if name[0] == "v" else "learner"
    base = discover.VERSIONS_DIR / discover.DEFAULT_WORKLOAD if kind == "rung" else discover.LEARNERS_DIR
    d = base / name
    if d.exists():
        raise StudyError(f"{d} already exists")
    taken = [x.name for x in (discover.rungs() if kind == "rung" else discover.learners())
             if x.number == number]
    if taken:
        raise StudyError(f"{kind} number {number} is taken by {taken[0]}; pick another")
    title = name.split("_", 1)[1].replace("_", " ").title()
    files = ({"version.py": NEW_VERSION, "rollout.py": NEW_ROLLOUT} if kind == "rung"
             else {"learner.py": NEW_LEARNER, "impl.py": NEW_LEARNER_IMPL})
    files["NOTES.md"] = NEW_NOTES
    from core.procutil import new_name, owner_alive
    for old in base.glob(f".{name}.study-*.tmp"):          # left by a killed `new`
        if not owner_alive(old.name[:-4]):
            import shutil
            shutil.rmtree(old, ignore_errors=True)
    tmp = base / f".{name}.{new_name('new')}.tmp"
    try:
        tmp.mkdir(parents=True)
        (tmp / "__init__.py").write_text("")
        for fname, text in files.items():
            (tmp / fname).write_text(text.format(name=name, number=number, title=title))
        tmp.rename(d)
    except OSError as e:
        raise StudyError(f"cannot create {d}: {e.strerror}")
    finally:
        if tmp.exists():
            import shutil
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"created {d.relative_to(base.parent)}/: {', '.join(sorted(files))}, __init__.py")
    cmd = "verify --version" if kind == "rung" else "verify-learners --learner"
    print(f"next: fill it in, then `python -m harness {cmd} {name}`")
