// v6 (chess): the batch's nine arrays in the MPI job's buffer (core/mpi/gather.hpp), and
// the Generator's view of them. The order and widths are spec.ARRAYS' (WORKLOAD.md), which
// launcher.py hands to the job's layout(); unlike CartPole's, every array is sent: the
// reward is not a constant here.
#pragma once
#include <cstddef>
#include <cstdint>

#include "mpi/gather.hpp"
#include "chess/env.hpp"

namespace chess_v6 {

// Bytes per transition of each array, in spec.ARRAYS order: obs mask action reward next_obs
// next_mask terminated truncated end.
inline mpi_job::Arrays arrays() {
    return {{8 * chess::OBS_WORDS, 8 * chess::MASK_WORDS, 8, 4, 8 * chess::OBS_WORDS, 8 * chess::MASK_WORDS, 1, 1, 1},
            std::vector<bool>(9, true)};
}

inline chess::BatchOut view(const mpi_job::Layout& L, char* b) {
    const auto& o = L.off;
    return {reinterpret_cast<uint64_t*>(b + o[0]), reinterpret_cast<uint64_t*>(b + o[1]),
            reinterpret_cast<int64_t*>(b + o[2]),  reinterpret_cast<float*>(b + o[3]),
            reinterpret_cast<uint64_t*>(b + o[4]), reinterpret_cast<uint64_t*>(b + o[5]),
            reinterpret_cast<bool*>(b + o[6]),     reinterpret_cast<bool*>(b + o[7]),
            reinterpret_cast<uint8_t*>(b + o[8])};
}

}  // namespace chess_v6
