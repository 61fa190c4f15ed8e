"""Micro-benchmarks are run by `make microbench` / the bench stage, not by `make test`."""
import os

if not os.environ.get("STUDY_MICROBENCH"):
    collect_ignore_glob = ["test_*.py"]
