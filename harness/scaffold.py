"""`python -m harness new NAME [--workload W]`: scaffold a rung (versions/<W>/vK_name/), a
learner (learners/lK_name/) or a training recipe (algorithms/aK_name/; another workload's
in algorithms/<W>/aK_name/) that discovery finds, verification checks and the bench
measures. A CartPole rung starts empty (it fails verification until its rollout is written);
another workload's rung, a learner and a recipe start as a copy of what is already there
(the workload's baseline rung, the reference learner, the ladder's last recipe), so they
verify, and each change is one idea checked at once."""
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

NEW_OTHER_VERSION = '''"""{name}: describe the idea of this rung in one line. It starts as {workload}'s baseline
rung, {base}, so it verifies; change one thing at a time, and after each
`python -m harness verify --workload {workload} --version {name}` (versions/{workload}/WORKLOAD.md)."""
from core.rung import Rung


def make_generator(cfg):
    from core.discover import get_rung
    return get_rung("{base}", "{workload}").make_generator(cfg)    # TODO: your generator


RUNG = Rung(
    number="{number}", title="{title}",
    summary="TODO: what this rung changes relative to the one below",
    make_generator=make_generator,
)
'''

NEW_RECIPE = '''"""{name}: describe this recipe's one idea in a line. It starts as {base} (no
change yet); put the settings it changes in `changes`, then
`python -m harness algorithms {workload_flag}--algorithm {name}` verifies and times it
(algorithms/ALGORITHM.md)."""
from {module} import {cls}

ALGORITHM = {cls}(
    number="{number}", title="{title}",
    summary="TODO: what this recipe changes relative to its base, and why",
    base="{base}",
    changes={{}},
    references=("TODO: the paper, or the sweep rows, the setting comes from",),
)
'''

NEW_LEARNER = '''"""{name}: describe the idea of this learner in one line."""
from core.learner import Learner


def make(cfg, replay):
    from .impl import MyLearner
    return MyLearner(cfg, replay)


LEARNER = Learner(
    number="{number}", title="{title}",
    summary="TODO: what this learner changes relative to the one below",
    make=make, workloads={workloads},
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


KINDS = {"v": "rung", "l": "learner", "a": "recipe"}


def _recipes(workload: str):
    if workload == "chess":
        from training import chess_algorithm as calg
        return calg.algorithms(), calg.CHESS_DIR, "training.chess_algorithm", "ChessAlgorithm"
    from training import algorithm as alg
    return alg.algorithms(), alg.ALGORITHMS_DIR, "training.algorithm", "Algorithm"


def plan(name: str, workload: str) -> tuple:
    """(kind, folder, {file: text}, next command) for `new NAME`, or StudyError in one line."""
    import re
    if not isinstance(name, str) or len(name) > 64 \
            or not re.fullmatch(r"[vla](\d+)([a-z]?)_[a-z0-9_]+", name, flags=re.ASCII):
        raise StudyError(f"name must look like v9_mine (a rung), l9_mine (a learner) or a9_mine (a "
                         f"recipe): a letter v, l or a, a number, an optional letter, _, lower-case "
                         f"words (at most 64 characters); got {name!r}")
    workload = discover.check_workload(workload)
    m = re.fullmatch(r"[vla](\d+)([a-z]?)_.*", name, flags=re.ASCII)
    number = m.group(1) + m.group(2)
    kind = KINDS[name[0]]
    title = name.split("_", 1)[1].replace("_", " ").title()
    fill = {"name": name, "number": number, "title": title, "workload": workload}
    if kind == "rung":
        d, existing = discover.VERSIONS_DIR / workload / name, discover.rungs(workload)
        if workload == discover.DEFAULT_WORKLOAD:
            files = {"version.py": NEW_VERSION, "rollout.py": NEW_ROLLOUT}
        else:
            fill["base"] = discover.baseline_rung(workload=workload).name
            files = {"version.py": NEW_OTHER_VERSION}
        nxt = f"verify --workload {workload} --version {name}"
    elif kind == "learner":
        d, existing = discover.LEARNERS_DIR / name, discover.learners()
        fill["workloads"] = repr((workload,))
        files = {"learner.py": NEW_LEARNER, "impl.py": NEW_LEARNER_IMPL}
        nxt = (f"verify-learners --learner {name}" if workload == discover.DEFAULT_WORKLOAD
               else f"learners --workload {workload} --learner {name}")
    else:
        existing, folder, module, cls = _recipes(workload)
        if not existing:
            raise StudyError(f"workload {workload} has no recipe yet to start from")
        d = folder / name
        flag = "" if workload == discover.DEFAULT_WORKLOAD else f"--workload {workload} "
        same_loop = [a for a in existing if getattr(a, "loop", None) == getattr(existing[0], "loop", None)]
        last = same_loop[-1]
        if type(last).__name__ != cls:                   # a recipe with its own trainer: keep its class
            module, cls = type(last).__module__, type(last).__name__
        fill.update(base=last.name, module=module, cls=cls, workload_flag=flag)
        files = {"recipe.py": NEW_RECIPE}
        nxt = f"algorithms {flag}--algorithm {name}"
    if d.exists():
        raise StudyError(f"{d} already exists")
    taken = [x.name for x in existing if x.number == number]
    if taken:
        raise StudyError(f"{kind} number {number} is taken by {taken[0]}; pick another")
    files["NOTES.md"] = NEW_NOTES
    return kind, d, {f: t.format(**fill) for f, t in files.items()}, nxt


def cmd_new(args):
    _, d, files, nxt = plan(args.name, getattr(args, "workload", None) or discover.DEFAULT_WORKLOAD)
    base, name = d.parent, d.name
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
            (tmp / fname).write_text(text)
        tmp.rename(d)
    except OSError as e:
        raise StudyError(f"cannot create {d}: {e.strerror}")
    finally:
        if tmp.exists():
            import shutil
            shutil.rmtree(tmp, ignore_errors=True)
    from core.rung import ROOT
    print(f"created {d.relative_to(ROOT)}/: {', '.join(sorted(files))}, __init__.py")
    print(f"next: fill it in, then `python -m harness {nxt}`")
