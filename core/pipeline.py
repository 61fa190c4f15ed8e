"""The order of `make bench`'s stages and of the report's sections, written once.

A bench stage is a module harness/cmd_<name>.py with `BENCH_STAGE = "its title"` and
`bench_stage(quick, progress)`; it runs for the workload it names (`BENCH_WORKLOAD`,
CartPole's when it does not say), in the order of STAGES below, after the rungs are timed.
A report section is a module report/sections/<name>.py with `render(ctx)`; REPORT.md holds
the sections in the order of SECTIONS. A stage or section not listed here is refused in one
line that says to add it here (harness/bench.py: bench_stages; report/render.py: sections):
its place is a reader's decision, taken where every other place can be seen."""
from __future__ import annotations

STAGES = {
    "cartpole": ("ceilings", "microbench", "peers", "mpi", "learners", "algorithms", "e2e"),
    "chess": ("perft", "chess_profile", "chess_peers", "chess_learners", "chess_train",
              "chess_algorithms"),
}

SECTIONS = (
    "intro", "answer", "verification", "ladder", "scaling", "micro", "peers", "learners", "mpi",
    "trained", "algorithms", "estimate", "chess", "chess_targets", "chess_e2e",
    "chess_algorithms", "chess_peers_train", "chess_search", "method", "machine",
)
