// L4q: L4p's round (learners/l4p_narrow_layer1, and L4c's l4c_native_chess.cpp compiled here
// unchanged) over TightItemsDQN (tight_items.hpp): where a row of the trunk is at most four
// vectors, each position's list of active inputs is kept in a slot of 48 entries (three
// cache lines) instead of L4c's 776 (3 KB). Every other line of the module is L4p's.
#include "tight_items.hpp"

#define ChessDQN TightItemsDQN
#include "../l4c_native_chess/l4c_native_chess.cpp"
