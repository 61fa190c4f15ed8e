// L4o: L4n's round (learners/l4n_compressed_legal, and L4c's l4c_native_chess.cpp compiled
// here unchanged) over FoldedArgmaxDQN (folded_argmax.hpp): the per-row phase's target pass
// computes the s' argmax's Q values 16 at a time, folded by the horizontal sum's own tree.
// Every other line of the module is L4n's.
#include "folded_argmax.hpp"

#define ChessDQN FoldedArgmaxDQN
#include "../l4c_native_chess/l4c_native_chess.cpp"
