// v6: `v6_mpi_rank --bench-gather [--quick]` (bench_gather.cpp), called from main in
// rank.cpp between MPI_Init and MPI_Finalize.
#pragma once

namespace v6 {

// Measures MPI_Gatherv of contiguous bytes and both batch gathers (v6's row blocks and the
// rejected column datatypes) and prints one JSON line a measurement on rank 0's stdout
// (harness/cmd_mpi.py reads them). Returns the program's exit status.
int bench_gather(int rank, int size, bool quick);

}  // namespace v6
