// L4i: L4c's round (learners/l4c_native_chess/l4c_native_chess.cpp, compiled here
// unchanged) over L4h's update (learners/l4h_balanced_back1) with layer 2's products over
// their nonzero terms. The forward's class (SparseForward) is put beneath L4f's per-row
// phase, whose layer-2 calls then reach it; the backward's products are SparseLayer2DQN's.
#include "sparse_forward.hpp"

#define ChessDQN SparseForward
#include "../l4h_balanced_back1/balanced_back1.hpp"
#undef ChessDQN

#include "sparse_layer2.hpp"

#define ChessDQN SparseLayer2DQN
#include "../l4c_native_chess/l4c_native_chess.cpp"
