"""Where a chess transition's time goes, phase by phase (not a rung): profile.cpp for the C++
core that v4-v6 share, python_chess.py for v1's python-chess game; harness chess-profile."""
