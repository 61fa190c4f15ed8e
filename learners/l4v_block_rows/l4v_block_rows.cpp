// L4v: L4u's round (learners/l4u_quiet_rows, and L4c's l4c_native_chess.cpp compiled here
// unchanged) over BlockRowsDQN (block_rows.hpp): the block's own rows of s kept in the block,
// and dW2's register block sized at compile time. Every other line is L4u's.
#include "block_rows.hpp"

#define ChessDQN BlockRowsDQN
#include "../l4c_native_chess/l4c_native_chess.cpp"
