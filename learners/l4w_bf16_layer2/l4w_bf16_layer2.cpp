// L4w: L4v's round (learners/l4v_block_rows, and L4c's l4c_native_chess.cpp compiled here
// unchanged) over Bf16Layer2DQN (bf16_layer2.hpp): layer 2's five products on bf16 pairs.
// Every other line is L4v's.
#include "bf16_layer2.hpp"

#define ChessDQN Bf16Layer2DQN
#include "../l4c_native_chess/l4c_native_chess.cpp"
