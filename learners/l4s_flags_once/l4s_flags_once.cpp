// L4s: L4r's round (learners/l4r_lean_block, and L4c's l4c_native_chess.cpp compiled here
// unchanged) over FlagsOnceDQN (flags_once.hpp): at 2 threads or more, layer 1's backward
// writes a W1 row's touched flag only when it is not yet set. Every other line of the module
// is L4r's.
#include "flags_once.hpp"

#define ChessDQN FlagsOnceDQN
#include "../l4c_native_chess/l4c_native_chess.cpp"
