"""The study's harness: discover, verify, time, record, report. Run as `python -m harness`."""
