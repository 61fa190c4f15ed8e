"""Bad input to the command line itself and to generate (its sizes, output path and weights
file): refused before work starts, in one line (tests/bad_input.py: what each case must
show, and how they run); and every command has its cases in one of the families."""
import pytest

from tests.bad_input import EGEN, GEN, LONG, V1, V2, family

# the outcomes fixture watches the repository's folders while its cases run, so no other
# test may write there meanwhile (`make test` runs these alone, after the rest)
pytestmark = pytest.mark.serial

CASES = [
    # -- the command line itself
    ("no-command", [], "required"),
    ("unknown-command", ["bogus"], "invalid choice"),
    ("list-extra-arg", ["list", "--bogus"], "unrecognized"),
    # -- generate: sizes and numbers
    ("gen-envs-0", [*GEN, "--envs", "0"], "--envs must be an integer in [1,"),
    ("gen-envs-negative", [*GEN, "--envs", "-5"], "--envs must be an integer in [1,"),
    ("gen-envs-text", [*GEN, "--envs", "abc"], "--envs must be an integer"),
    ("gen-envs-float", [*GEN, "--envs", "1e3"], "--envs must be an integer"),
    ("gen-envs-unicode-digit", [*GEN, "--envs", "\u0663"], "--envs must be an integer"),
    ("gen-envs-huge", [*GEN, "--envs", "1000000000000"], "--envs must be an integer in [1,"),
    ("gen-envs-digits", [*GEN, "--envs", "9" * 5000], "--envs must be an integer"),
    ("gen-steps-0", [*GEN, "--steps", "0"], "--steps must be an integer in [1,"),
    ("gen-steps-huge", [*GEN, "--steps", str(2 ** 40)], "--steps must be an integer in [1,"),
    ("gen-transitions", [*GEN, "--envs", "100000", "--steps", "100000"], "transitions per call"),
    ("gen-memory", [*GEN, "--envs", "1048576", "--steps", "255"], "GiB"),
    ("gen-memory-calls", [*GEN, "--envs", "65536", "--steps", "1024", "--calls", "1000"], "GiB"),
    ("gen-calls-0", [*GEN, "--calls", "0"], "--calls must be an integer in [1,"),
    ("gen-calls-huge", [*GEN, "--calls", str(1 << 21)], "--calls must be an integer in [1,"),
    ("gen-seed-negative", [*GEN, "--seed", "-1"], "seed must be an integer in [0, 2^64)"),
    ("gen-seed-2^64", [*GEN, "--seed", str(2 ** 64)], "seed must be an integer in [0, 2^64)"),
    ("gen-seed-nan", [*GEN, "--seed", "nan"], "seed must be an integer"),
    ("gen-epsilon-big", [*GEN, "--epsilon", "1.5"], "epsilon must be a finite number in [0, 1]"),
    ("gen-epsilon-negative", [*GEN, "--epsilon", "-0.1"], "epsilon must be a finite number in [0, 1]"),
    ("gen-epsilon-nan", [*GEN, "--epsilon", "nan"], "epsilon must be a finite number in [0, 1]"),
    ("gen-epsilon-inf", [*GEN, "--epsilon", "inf"], "epsilon must be a finite number in [0, 1]"),
    ("gen-policy", [*GEN, "--policy", "greedy"], "invalid choice"),
    ("gen-version-unknown", ["generate", "--version", "v42_nothing", "--out", "{out}"], "unknown version"),
    ("gen-version-empty", ["generate", "--version", "", "--out", "{out}"], "unknown version"),
    ("gen-version-newline", ["generate", "--version", "v1\npython", "--out", "{out}"], "unknown version"),
    ("gen-workers-0", [*GEN, "--workers", "0"], "--workers must be an integer in [1,"),
    ("gen-workers-serial", [*GEN, "--workers", "2"], "no parallelism"),
    ("gen-workers-v2-limit", ["generate", *V2, "--out", "{out}", "--envs", "100", "--workers", "65"],
     "--workers must be in [1, 64]"),
    ("gen-workers-v2-envs", ["generate", *V2, "--out", "{out}", "--envs", "4", "--workers", "5"],
     "at most --envs"),
    ("gen-missing-out", ["generate", *V1], "--out"),
    # -- generate: the output path
    ("gen-out-folder", ["generate", *V1, "--out", "{dir}"], "names a folder"),
    ("gen-out-no-suffix", ["generate", *V1, "--out", "{tmp}/batch"], "must end in .npz"),
    ("gen-out-slash", ["generate", *V1, "--out", "{tmp}/nothere/"], "names a folder"),
    ("gen-out-missing-folder", ["generate", *V1, "--out", "{tmp}/no/such/x.npz"], "does not exist"),
    ("gen-out-parent-is-file", ["generate", *V1, "--out", "{file}/x.npz"], "not a folder"),
    ("gen-out-long-name", ["generate", *V1, "--out", "{tmp}/" + LONG + ".npz"], "too long"),
    ("gen-out-long-name-no-suffix", ["generate", *V1, "--out", "{tmp}/" + LONG], "too long"),
    ("gen-workload-unknown", ["generate", "--workload", "go", *V1, "--out", "{out}"], "unknown workload"),
    ("gen-out-newline", ["generate", *V1, "--out", "{tmp}/a\nb.npz"], "printable"),
    ("gen-out-empty", ["generate", *V1, "--out", ""], "--out must be a file path"),
    ("gen-out-unwritable", ["generate", *V1, "--out", "/proc/study-x.npz"], "not writable"),
    # -- generate: the weights file
    ("w-missing-file", [*EGEN, "{tmp}/none.npz"], "does not exist"),
    ("w-folder", [*EGEN, "{dir}"], "is a folder"),
    ("w-device", [*EGEN, "/dev/zero"], "not a regular file"),
    ("w-hidden-0", [*EGEN, "{w:h0}"], "1 <= H <= 4096"),
    ("w-object-array", [*EGEN, "{w:object}"], "Python objects"),
    ("w-pickle", [*EGEN, "{w:pickle}"], "not a readable .npz"),
    ("w-zip-not-npz", [*EGEN, "{w:zip_txt}"], "not a .npy array"),
    ("w-text", [*EGEN, "{w:text}"], "not a readable .npz"),
    ("w-empty-file", [*EGEN, "{w:empty}"], "not a readable .npz"),
    ("w-truncated", [*EGEN, "{w:truncated}"], "--weights"),
    ("w-nan", [*EGEN, "{w:nan}"], "non-finite"),
    ("w-inf", [*EGEN, "{w:inf}"], "non-finite"),
    ("w-overflow", [*EGEN, "{w:overflow}"], "non-finite"),
    ("w-strings", [*EGEN, "{w:strings}"], "dtype"),
    ("w-bool", [*EGEN, "{w:bool}"], "dtype"),
    ("w-complex", [*EGEN, "{w:complex}"], "dtype"),
    ("w-missing-key", [*EGEN, "{w:missing}"], "missing key(s) b2"),
    ("w-w2-shape", [*EGEN, "{w:w2_shape}"], "w2 must have shape"),
    ("w-w1-3d", [*EGEN, "{w:w1_3d}"], "w1 must have shape"),
    ("w-scalars", [*EGEN, "{w:scalars}"], "w1 must have shape"),
    ("w-huge-header", [*EGEN, "{w:huge_header}"], "too large"),
    ("w-lying-header", [*EGEN, "{w:lying_header}"], "not a readable .npz"),
]

(outcomes, test_refused_in_one_line, test_refused_in_one_line_by_the_real_entry_point,
 test_nothing_written_in_the_repository) = family(CASES)


def test_enough_cases_over_every_command():
    """Every command has cases, all of them in one family (its first case is the one that
    also runs for real), and no case id is used twice."""
    from harness.__main__ import build_parser
    from tests import test_bad_input_bench, test_bad_input_train
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    commands = set(sub.choices)
    families = [CASES, test_bad_input_bench.CASES, test_bad_input_train.CASES]
    every = [c for cases in families for c in cases]
    covered = [{c[1][0] for c in cases if c[1]} for cases in families]
    assert len(every) >= 50 and len({c[0] for c in every}) == len(every)
    assert commands <= set().union(*covered), \
        f"commands without a bad-input case: {sorted(commands - set().union(*covered))}"
    assert sum(len(c) for c in covered) == len(set().union(*covered)), "a command in two families"


def test_out_is_written_exactly_as_named_or_not_at_all(tmp_path):
    """`--out DIR` once wrote DIR.npz beside the folder, and `--out x` wrote x.npz: the file
    written is the one named, or nothing is."""
    from harness.__main__ import main
    d = tmp_path / "d"
    d.mkdir()
    assert main(["learn", "--learner", "l1", "--updates", "1", "--out", str(d)]) == 2
    assert main(["generate", *V1, "--out", str(tmp_path / "x")]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"] and not any(d.iterdir())


def test_microbench_exit_status_is_not_its_count(monkeypatch):
    """`harness microbench` returned how many benchmarks it ran, which became the exit status
    (make: Error 28 after a good run)."""
    from harness import cmd_microbench
    from harness.__main__ import main
    monkeypatch.setattr(cmd_microbench, "run", lambda quick=False, progress=None: 28)
    assert main(["microbench", "--quick"]) == 0
