"""The algorithm ladder: one folder per training recipe (ALGORITHM.md; core/algorithm.py)."""
