"""v5e_counted_reply (chess)."""
