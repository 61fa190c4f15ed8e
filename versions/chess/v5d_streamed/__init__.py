"""v5d_streamed (chess)."""
