"""The MPI job, written once for every workload (as core/worker_pool.py is for v2): mpirun
started once, rank 0 connected back over a Unix socket, one small command a call, every
rank stepping its contiguous block of environments, one gather collective landing the
blocks in a batch in shared memory that Python reads as NumPy arrays.

- protocol.py: the socket's 64-byte headers and the batch's layout (twins: wire.hpp,
  gather.hpp);
- job.py: mpirun's command line and environment, the deadline and stop watch over a wait
  for rank 0, killing the job's session and removing its folders;
- generator.py: MPIGenerator, the Generator a workload's v6 rung makes, given its Spec
  (rank program, batch arrays, weight and input checks, a transition's cost);
- serve.hpp: the rank program's loop (rank 0's commands, the broadcast, calibration, the
  gather), over a workload's Work (its games and policy); gather.hpp: the batch's layout in
  one buffer and the row-block gather; wire.hpp: the socket's headers.

A workload's v6 folder holds its Work (rank.cpp), its batch's arrays (batch.hpp) and its
Spec (launcher.py); native.cmake builds the program (study_add_mpi_program).
"""
