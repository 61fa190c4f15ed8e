"""v5c_blocked_sparse (chess)."""
