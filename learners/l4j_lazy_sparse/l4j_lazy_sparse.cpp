// L4j: L4e's round (learners/l4e_lazy_adamw/l4e_lazy_adamw.cpp, compiled here unchanged: its
// gather phase, lazy AdamW, settle, bindings) over L4i's update (learners/l4i_sparse_layer2:
// L4h's phases with layer 2 over its nonzero terms). As L4g does for L4f: the class at the
// bottom of L4i's stack is pointed at L4e's LazyDQN, and the name L4e's file uses for its
// update class at the result. Lazy AdamW touches `adam` and adds `gather`; L4i touches
// `rows`, `back2` and `back1`: the phases do not overlap, and the weights equal L4c's.
#include "../l4e_lazy_adamw/lazy_dqn.hpp"

#define ChessDQN LazyDQN
#include "../l4i_sparse_layer2/sparse_forward.hpp"
#undef ChessDQN

#define ChessDQN SparseForward
#include "../l4h_balanced_back1/balanced_back1.hpp"
#undef ChessDQN

#include "../l4i_sparse_layer2/sparse_layer2.hpp"

#define LazyDQN SparseLayer2DQN
#include "../l4e_lazy_adamw/l4e_lazy_adamw.cpp"
