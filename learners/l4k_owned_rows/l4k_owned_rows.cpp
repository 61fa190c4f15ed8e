// L4k: L4j's update (learners/l4j_lazy_sparse: L4e's round over L4i's phases, composed as
// l4j_lazy_sparse.cpp composes it) with the lazy AdamW's sparse rows dealt to threads in
// blocks (owned_rows.hpp): the class on top of L4i's stack is OwnedRowsDQN, and L4e's file,
// compiled here unchanged, names it as its update class.
#include "../l4e_lazy_adamw/lazy_dqn.hpp"

#define ChessDQN LazyDQN
#include "../l4i_sparse_layer2/sparse_forward.hpp"
#undef ChessDQN

#define ChessDQN SparseForward
#include "../l4h_balanced_back1/balanced_back1.hpp"
#undef ChessDQN

#include "../l4i_sparse_layer2/sparse_layer2.hpp"
#include "owned_rows.hpp"

#define LazyDQN OwnedRowsDQN
#include "../l4e_lazy_adamw/l4e_lazy_adamw.cpp"
