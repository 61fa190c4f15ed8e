"""Bad input to the measuring and inspecting commands (chess-profile, perft, learn, new,
bench, measure, microbench, mpi, ceilings, report, peers, verify, verify-learners, learners):
refused before work starts, in one line (tests/bad_input.py: what each case must show, and
how they run)."""
import pytest

from tests.bad_input import V1, V2, family

# the outcomes fixture watches the repository's folders while its cases run, so no other
# test may write there meanwhile (`make test` runs these alone, after the rest)
pytestmark = pytest.mark.serial

CASES = [
    # -- chess-profile (where a chess transition's time goes)
    ("chess-profile-positions-0", ["chess-profile", "--positions", "0"], "--positions must be an integer in [1,"),
    ("chess-profile-reps-huge", ["chess-profile", "--reps", "5000"], "--reps must be an integer in [1,"),
    # -- perft (the chess rungs' move generators)
    ("perft-fen-garbage", ["perft", "--version", "v4_cpp", "--fen", "not a fen", "--depth", "1"], "does not parse"),
    ("perft-fen-illegal", ["perft", "--version", "v4_cpp", "--fen", "8/8/8/8/8/8/8/8 w - - 0 1", "--depth", "1"],
     "not a legal position"),
    ("perft-depth-0", ["perft", "--version", "v4_cpp", "--depth", "0"], "--depth must be an integer in [1,"),
    ("perft-depth-huge", ["perft", "--version", "v4_cpp", "--depth", "99"], "--depth must be an integer in [1,"),
    ("perft-not-chess", ["perft", "--version", "v5b_simd", "--depth", "1"], "unknown version"),
    ("perft-no-movegen", ["perft", "--version", "v1_python", "--depth", "1"], "no move generator of its own"),
    # -- learn
    ("learn-unknown", ["learn", "--learner", "nope", "--updates", "1", "--out", "{out}"], "unknown learner"),
    ("learn-updates-0", ["learn", "--learner", "l1", "--updates", "0", "--out", "{out}"], "--updates"),
    ("learn-updates-huge", ["learn", "--learner", "l1", "--updates", str(1 << 30), "--out", "{out}"], "--updates"),
    ("learn-threads-0", ["learn", "--learner", "l1", "--updates", "1", "--threads", "0", "--out", "{out}"],
     "--threads"),
    ("learn-threads-many", ["learn", "--learner", "l1", "--updates", "1", "--threads", "200", "--out", "{out}"],
     "--threads must be at most"),
    ("learn-seed", ["learn", "--learner", "l1", "--updates", "1", "--seed", "-3", "--out", "{out}"], "seed"),
    ("learn-out-folder", ["learn", "--learner", "l1", "--updates", "1", "--out", "{tmp}/no/x.npz"], "does not exist"),
    ("learn-no-out", ["learn", "--learner", "l1", "--updates", "1"], "--out"),
    # -- new
    ("new-newline", ["new", "v9_a\nb"], "must look like"),
    ("new-slash", ["new", "v9_a/b"], "must look like"),
    ("new-dotdot", ["new", "../v9_evil"], "must look like"),
    ("new-dots", ["new", "v9_.."], "must look like"),
    ("new-unicode-digit", ["new", "v\u0663_mine"], "must look like"),
    ("new-unicode-letter", ["new", "v9_caf\u00e9"], "must look like"),
    ("new-too-long", ["new", "v9_" + "a" * 80], "at most 64"),
    ("new-empty", ["new", ""], "must look like"),
    ("new-upper", ["new", "v9_Mine"], "must look like"),
    ("new-space", ["new", "l9 mine"], "must look like"),
    ("new-exists", ["new", "v1_python"], "already exists"),
    ("new-number-taken", ["new", "v1_again"], "is taken"),
    ("new-no-name", ["new"], "required"),
    # -- bench and measure
    ("bench-budget-negative", ["bench", *V1, "--budget", "-1"], "--budget must be a finite number in (0, 3600]"),
    ("bench-budget-nan", ["bench", *V1, "--budget", "nan"], "--budget must be a finite number in (0, 3600]"),
    ("bench-budget-inf", ["bench", *V1, "--budget", "inf"], "--budget must be a finite number in (0, 3600]"),
    ("bench-budget-0", ["bench", *V1, "--budget", "0"], "--budget must be a finite number in (0, 3600]"),
    ("bench-budget-huge", ["bench", *V1, "--budget", "1e9"], "--budget must be a finite number in (0, 3600]"),
    ("bench-stages-bogus", ["bench", "--stages", "bogus"], "unknown stage(s) bogus"),
    ("bench-stages-empty", ["bench", "--stages", ""], "--stages must be"),
    ("bench-stages-trailing", ["bench", "--stages", "peers,"], "--stages must be"),
    ("bench-stages-with-version", ["bench", *V1, "--stages", "peers"], "--stages runs only"),
    ("bench-envs-huge", ["bench", "--envs", "1000000000000"], "--envs must be an integer in [1,"),
    ("bench-envs-0", ["bench", "--envs", "0"], "--envs must be an integer in [1,"),
    ("bench-steps-0", ["bench", "--steps", "0"], "--steps must be an integer in [1,"),
    ("bench-memory", ["bench", *V1, "--envs", "1048576", "--steps", "255"], "GiB"),
    ("bench-steps-memory", ["bench", *V1, "--steps", "100000000"], "GiB"),
    ("bench-version-unknown", ["bench", "--version", "nope"], "unknown version"),
    ("bench-workers-0", ["bench", "--workers", "0"], "--workers must be an integer in [1,"),
    ("bench-workers-huge", ["bench", "--workers", "5000"], "--workers must be an integer in [1,"),
    ("bench-workers-v2-limit", ["bench", *V2, "--workers", "300"], "exceeds what every selected rung"),
    ("bench-workers-serial", ["bench", *V1, "--workers", "2"], "--workers is for parallel rungs"),
    ("bench-workers-gt-envs", ["bench", *V2, "--envs", "2", "--workers", "3"], "at most --envs"),
    ("bench-policy", ["bench", "--policy", "bogus"], "invalid choice"),
    ("measure-budget-nan", ["measure", *V1, "--policy", "random", "--envs", "2", "--steps", "2",
                            "--budget", "nan"], "--budget must be a finite number"),
    ("measure-envs-0", ["measure", *V1, "--policy", "random", "--envs", "0", "--steps", "2"], "--envs"),
    ("measure-no-version", ["measure", "--policy", "random", "--envs", "2", "--steps", "2"], "--version"),
    ("measure-unknown", ["measure", "--version", "nope", "--policy", "random", "--envs", "2",
                         "--steps", "2"], "unknown version"),
    ("measure-workers-serial", ["measure", *V1, "--policy", "random", "--envs", "2", "--steps", "2",
                                "--workers", "3"], "no parallelism"),
    ("measure-memory", ["measure", *V1, "--policy", "random", "--envs", "1048576", "--steps", "255"], "GiB"),
    # -- microbench, mpi, ceilings, report
    ("microbench-extra", ["microbench", "--bogus"], "unrecognized"),
    ("mpi-extra", ["mpi", "extra"], "unrecognized"),
    ("ceilings-threads-0", ["ceilings", "--threads", "0"], "--threads must be an integer in [1,"),
    ("ceilings-threads-many", ["ceilings", "--threads", "1000"], "--threads must be at most"),
    ("ceilings-probe", ["ceilings", "--probe", "bogus"], "invalid choice"),
    ("report-machine", ["report", "--machine", "nope"], "--machine 'nope' has no rows"),
    ("report-machine-newline", ["report", "--machine", "a\nb"], "--machine"),
    ("report-dir-missing", ["report", "--report-dir", "{tmp}/no/such/dir"], "does not exist"),
    ("report-dir-file", ["report", "--report-dir", "{file}"], "is a file"),
    ("report-no-results", ["report"], "does not exist"),
    # -- peers
    ("peers-envs-huge", ["peers", "--envs", "1000000000000"], "--envs must be an integer in [1,"),
    ("peers-envs-0", ["peers", "--envs", "0"], "--envs must be an integer in [1,"),
    ("peers-steps-0", ["peers", "--steps", "0"], "--steps must be an integer in [1,"),
    ("peers-memory", ["peers", "--envs", "16000000", "--steps", "16"], "GiB"),
    ("peers-transitions", ["peers", "--envs", "16000000", "--steps", "32"], "transitions per call"),
    ("peers-unknown", ["peers", "--peer", "nope"], "unknown peer"),
    ("peers-policy", ["peers", "--policy", "bogus"], "invalid choice"),
    ("peers-async-envs", ["peers", "--peer", "gym_async", "--envs", "1000"], "one process per environment"),
    ("peers-peer-newline", ["peers", "--peer", "gym\nsync"], "unknown peer"),
    # -- verify, verify-learners
    ("verify-unknown", ["verify", "--version", "nope"], "unknown version"),
    ("verify-empty", ["verify", "--version", ""], "unknown version"),
    ("verify-learners-unknown", ["verify-learners", "--learner", "nope"], "unknown learner"),
    # -- learners (the learner ladder's stage)
    ("learners-unknown", ["learners", "--learner", "nope"], "unknown learner"),
    ("learners-threads-0", ["learners", "--threads", "0"], "--threads"),
    ("learners-threads-huge", ["learners", "--threads", "100000"], "--threads"),
    ("learners-bogus", ["learners", "--bogus"], "unrecognized"),
    ("learners-device", ["learners", "--device", "tpu"], "invalid choice"),
    ("learners-device-none", ["learners", "--device", "cuda", "--learner", "l3_native_update"],
     "can run on cuda"),
    ("learners-workload", ["learners", "--workload", "go"], "--workload"),
    ("learners-chess-none", ["learners", "--workload", "chess", "--learner", "l3_native_update"],
     "trains chess"),
]

(outcomes, test_refused_in_one_line, test_refused_in_one_line_by_the_real_entry_point,
 test_nothing_written_in_the_repository) = family(CASES)
