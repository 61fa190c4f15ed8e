"""v5b_sparse_net (chess)."""
