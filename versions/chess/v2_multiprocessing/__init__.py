"""v2_multiprocessing (chess): v1's games in persistent worker processes, the batch in
shared memory."""
