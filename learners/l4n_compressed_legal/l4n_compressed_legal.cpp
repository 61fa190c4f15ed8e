// L4n: L4m's round (learners/l4m_rows_out, and L4c's l4c_native_chess.cpp compiled here
// unchanged) over CompressedLegalDQN (compressed_legal.hpp): s' legal actions listed by
// AVX-512 compress instructions in the per-row phase. Every other line of the module is L4m's.
#include "compressed_legal.hpp"

#define ChessDQN CompressedLegalDQN
#include "../l4c_native_chess/l4c_native_chess.cpp"
