// L4f: L4c's round of U DQN updates on chess's network (learners/l4c_native_chess/
// l4c_native_chess.cpp, compiled here unchanged: its phases, barriers, sampling, bindings)
// over FastRowsDQN (fast_rows.hpp), whose per-row phase prefetches what it will read. The
// one name L4c's file uses for its update class is pointed at the new class below; every
// other line of the module is L4c's.
#include "fast_rows.hpp"

#define ChessDQN FastRowsDQN
#include "../l4c_native_chess/l4c_native_chess.cpp"
