// L4p: L4o's round (learners/l4o_folded_argmax, and L4c's l4c_native_chess.cpp compiled here
// unchanged) over NarrowLayer1DQN (narrow_layer1.hpp): layer 1's forward and backward held in
// registers when a row of the trunk is at most four vectors. Every other line of the module
// is L4o's.
#include "narrow_layer1.hpp"

#define ChessDQN NarrowLayer1DQN
#include "../l4c_native_chess/l4c_native_chess.cpp"
