// L4d: L4b's threaded round with its matrix products on bf16 operands (bf16_gemm.hpp, this
// rung's idea); everything else is L4b's source, included unchanged.
#include "bf16_gemm.hpp"
#include "l4b_native_round_threads.cpp"     // learners/l4b_native_round_threads
