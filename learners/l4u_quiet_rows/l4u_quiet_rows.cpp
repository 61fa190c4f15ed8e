// L4u: L4t's round (learners/l4t_own_sums, and L4c's l4c_native_chess.cpp compiled here
// unchanged) over QuietRowsDQN (quiet_rows.hpp): AdamW leaves out the W3 rows of off-board
// actions that never had a gradient, whose step is the identity. Every other line is L4t's.
#include "quiet_rows.hpp"

#define ChessDQN QuietRowsDQN
#include "../l4c_native_chess/l4c_native_chess.cpp"
