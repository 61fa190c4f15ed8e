// L4r: L4q's round (learners/l4q_tight_items, and L4c's l4c_native_chess.cpp compiled here
// unchanged) over LeanBlockDQN (lean_block.hpp): the per-row phase's block of rows with its
// lists by byte compress, s' rows in a scratch and layer 2 three vectors a pass. Every other
// line of the module is L4q's.
#include "lean_block.hpp"

#define ChessDQN LeanBlockDQN
#include "../l4c_native_chess/l4c_native_chess.cpp"
