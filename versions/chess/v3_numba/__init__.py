"""v3_numba (chess): the chess environment compiled with Numba, bitboards, its own move generator."""
