// v6: the batch's layout in one buffer, and the gather that lands every rank's block in it.
// Used by the rollout job (v6_mpi_rank.cpp) and by --bench-gather (bench_gather.cpp).
//
// The gather: in a time-major array one rank's environments are not contiguous, but its
// part of each time row is (n_r environments side by side). So rank r's block is
// described, on rank 0, by one derived datatype: for each array an hvector of T runs of
// n_r elements with the batch's row stride, at that array's offset + lo_r, the five bound
// into a struct. Each sender's datatype is its five local [T, n_r] arrays. The whole batch
// is one collective, which MPI unpacks into place (no transpose pass, no per-transition
// messages). Since every rank needs its own receive datatype (n_r, lo_r differ) and
// MPI_Gatherv takes only one, the collective is MPI_Alltoallw used as a gather (only the
// counts towards rank 0 are non-zero). The Gatherv alternative -- one datatype "one
// environment's column over T rows" (MPI_Type_vector resized to one environment) with
// displs = lo_r, 3 calls for the 16-, 8- and 1-byte element widths -- is kept for the
// benchmark (bench_gather.cpp): it moves the same bytes in 16/8/1-byte pieces and measured
// slower (NOTES.md). Rank 0's own block is written in place. reward is 1.0 everywhere and
// is filled on rank 0, not sent.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "rollout.hpp"

namespace v6 {

// ---- the batch layout in one buffer (protocol.py's layout()) ------------------------------
inline constexpr size_t ALIGN = 64;
inline size_t up(size_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

struct Layout {
    size_t obs, next_obs, action, reward, terminated, truncated, total;
    Layout(size_t T, size_t ld) {
        const size_t n = T * ld;
        obs = 0;
        next_obs = up(obs + n * 16);
        action = up(next_obs + n * 16);
        reward = up(action + n * 8);
        terminated = up(reward + n * 4);
        truncated = up(terminated + n);
        total = up(truncated + n);
    }
    study::OutView view(char* base, int64_t ld) const {
        study::OutView v;
        v.obs = reinterpret_cast<float*>(base + obs);
        v.next_obs = reinterpret_cast<float*>(base + next_obs);
        v.action = reinterpret_cast<int64_t*>(base + action);
        v.reward = reinterpret_cast<float*>(base + reward);
        v.terminated = reinterpret_cast<bool*>(base + terminated);
        v.truncated = reinterpret_cast<bool*>(base + truncated);
        v.ld = ld;
        return v;
    }
};

// ---- the gather v6 uses: row blocks, one collective --------------------------------------
// In a time-major array rank r's part of time row t is one contiguous run of n_r
// environments (n_r*16 bytes of obs, n_r*8 of action, ...). The receive datatype of rank r
// is, for each of the 5 arrays, an hvector of T such runs with the row stride of the whole
// batch, placed at that array's offset + lo_r; the 5 are bound into one struct, so the
// whole block of rank r lands in place in one go. The sender's datatype is its 5 local
// arrays (each contiguous) in the same order. Because every rank needs its own receive
// datatype (n_r and lo_r differ), the collective is MPI_Alltoallw used as a gather (only
// the counts towards rank 0 are non-zero): MPI_Gatherv takes a single receive datatype,
// which forces either equal slices or the 16-byte column pieces of bench_gather.cpp (slower,
// measured by --bench-gather). reward is not sent: it is 1.0 everywhere.
struct ArrayPart { size_t Layout::*off; int width; };
inline constexpr ArrayPart PARTS[5] = {{&Layout::obs, 16}, {&Layout::next_obs, 16}, {&Layout::action, 8},
                                       {&Layout::terminated, 1}, {&Layout::truncated, 1}};

inline MPI_Datatype rows_type(int T, int64_t N, int64_t lo, int64_t n) {     // root: rank's block in [T, N]
    Layout L(T, N);
    MPI_Datatype parts[5], out;
    int lens[5] = {1, 1, 1, 1, 1};
    MPI_Aint disp[5];
    for (int k = 0; k < 5; ++k) {
        const int w = PARTS[k].width;
        MPI_Type_create_hvector(T, static_cast<int>(n * w), static_cast<MPI_Aint>(N) * w, MPI_BYTE, &parts[k]);
        disp[k] = static_cast<MPI_Aint>(L.*PARTS[k].off + lo * w);
    }
    MPI_Type_create_struct(5, lens, disp, parts, &out);
    for (auto& t : parts) MPI_Type_free(&t);
    MPI_Type_commit(&out);
    return out;
}

inline MPI_Datatype local_type(int T, int64_t n) {                           // sender: its [T, n] arrays
    return rows_type(T, n, 0, n);       // the same construction with row stride n (int-safe sizes)
}

struct RowTypes {               // for one T: the root's P receive types, or a sender's one
    std::vector<MPI_Datatype> recv;
    MPI_Datatype send = MPI_DATATYPE_NULL;
    RowTypes() = default;
    RowTypes(int rank, int size, int T, int64_t N, const std::vector<int>& counts, const std::vector<int>& displs) {
        if (rank == 0) {
            recv.assign(size, MPI_BYTE);
            for (int r = 1; r < size; ++r)
                if (counts[r] > 0) recv[r] = rows_type(T, N, displs[r], counts[r]);
        } else if (counts[rank] > 0) {
            send = local_type(T, counts[rank]);
        }
    }
    void free() {
        for (auto& t : recv)
            if (t != MPI_BYTE) MPI_Type_free(&t);
        recv.clear();
        if (send != MPI_DATATYPE_NULL) MPI_Type_free(&send);
    }
};

// One collective: every rank's block into rank 0's `out` ([T, N] layout; rank 0's own block
// is already in place). Others pass their local [T, n] buffer.
inline void gather_rows(int rank, int size, char* out, const RowTypes& ty, const std::vector<int>& counts,
                        MPI_Comm comm) {
    std::vector<int> sc(size, 0), rc(size, 0), zd(size, 0);
    std::vector<MPI_Datatype> st(size, MPI_BYTE);
    if (rank == 0) {
        for (int r = 1; r < size; ++r) rc[r] = counts[r] > 0 ? 1 : 0;
        MPI_Alltoallw(out, sc.data(), zd.data(), st.data(), out, rc.data(), zd.data(), ty.recv.data(), comm);
    } else {
        std::vector<MPI_Datatype> rt(size, MPI_BYTE);
        if (counts[rank] > 0) {
            sc[0] = 1;
            st[0] = ty.send;
        }
        MPI_Alltoallw(out, sc.data(), zd.data(), st.data(), out, rc.data(), zd.data(), rt.data(), comm);
    }
}

}  // namespace v6
