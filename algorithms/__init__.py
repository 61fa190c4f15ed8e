"""The algorithm ladder: one folder per training recipe (ALGORITHM.md; training/algorithm.py)."""
