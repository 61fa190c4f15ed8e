// L4h: L4c's round of U DQN updates on chess's network (learners/l4c_native_chess/
// l4c_native_chess.cpp, compiled here unchanged) over BalancedBack1DQN (balanced_back1.hpp):
// L4f's prefetched per-row phase, with layer 1's backward computed row-major in back2 and
// split by gradient row in back1. Every other line of the module is L4c's.
#include "balanced_back1.hpp"

#define ChessDQN BalancedBack1DQN
#include "../l4c_native_chess/l4c_native_chess.cpp"
