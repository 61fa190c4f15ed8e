// L4g: L4e's round (learners/l4e_lazy_adamw/l4e_lazy_adamw.cpp, compiled here unchanged: its
// gather phase, lazy AdamW, settle, bindings) over L4f's per-row phase and layer-1 backward
// (learners/l4f_prefetched_rows/fast_rows.hpp, unchanged). Two ideas measured apart below,
// here together: the class L4f's header derives from is pointed at L4e's LazyDQN, and the
// name L4e's file uses for its update class at the result. Weights equal L4c's bit for bit,
// as both parents' do.
#include "../l4e_lazy_adamw/lazy_dqn.hpp"

#define ChessDQN LazyDQN
#include "../l4f_prefetched_rows/fast_rows.hpp"
#undef ChessDQN

#define LazyDQN FastRowsDQN
#include "../l4e_lazy_adamw/l4e_lazy_adamw.cpp"
