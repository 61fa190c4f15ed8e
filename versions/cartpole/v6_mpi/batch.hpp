// v6: CartPole's batch in the MPI job's buffer (core/mpi/gather.hpp): its six arrays, and
// the rollout's view of them. Used by the rank program (v6_mpi_rank.cpp) and by
// --bench-gather (bench_gather.cpp). reward is 1.0 everywhere: it is filled on rank 0,
// not sent.
#pragma once
#include <cstddef>
#include <cstdint>

#include "mpi/gather.hpp"
#include "rollout.hpp"

namespace v6 {

enum Array { OBS, NEXT_OBS, ACTION, REWARD, TERMINATED, TRUNCATED };

// Bytes per transition of each array, in protocol.py's order (launcher.py's ARRAYS).
inline mpi_job::Arrays arrays() { return {{16, 16, 8, 4, 1, 1}, {true, true, true, false, true, true}}; }

inline mpi_job::Layout layout(size_t T, size_t ld) { return mpi_job::Layout(arrays(), T, ld); }

inline study::OutView view(const mpi_job::Layout& L, char* base, int64_t ld) {
    study::OutView v;
    v.obs = reinterpret_cast<float*>(base + L.off[OBS]);
    v.next_obs = reinterpret_cast<float*>(base + L.off[NEXT_OBS]);
    v.action = reinterpret_cast<int64_t*>(base + L.off[ACTION]);
    v.reward = reinterpret_cast<float*>(base + L.off[REWARD]);
    v.terminated = reinterpret_cast<bool*>(base + L.off[TERMINATED]);
    v.truncated = reinterpret_cast<bool*>(base + L.off[TRUNCATED]);
    v.ld = ld;
    return v;
}

}  // namespace v6
