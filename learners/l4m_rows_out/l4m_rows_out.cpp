// L4m: L4h's round (learners/l4h_balanced_back1, and L4c's l4c_native_chess.cpp compiled here
// unchanged) over RowsOutDQN (rows_out.hpp): the same update, its weights read out row by
// row instead of column by column. Every other line of the module is L4h's.
#include "rows_out.hpp"

#define ChessDQN RowsOutDQN
#include "../l4c_native_chess/l4c_native_chess.cpp"
