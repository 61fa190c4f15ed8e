"""v5_openmp (chess)."""
