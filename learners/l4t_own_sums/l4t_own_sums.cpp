// L4t: L4s's round (learners/l4s_flags_once, and L4c's l4c_native_chess.cpp compiled here
// unchanged) over OwnSumsDQN (own_sums.hpp): where the block of rows is L4r's lean one, each
// thread takes its rows' backward in the block and keeps its own gradient sums, added to
// thread 0's once a round's rows are done. Every other line of the module is L4s's.
#include "own_sums.hpp"

#define ChessDQN OwnSumsDQN
#include "../l4c_native_chess/l4c_native_chess.cpp"
