// v6 (chess): the batch's nine arrays in one buffer, and the gather that lands every rank's
// block of games in it. The layout is batch.py's layout() (keep the two in step); the
// gather is CartPole v6's row blocks (versions/cartpole/v6_mpi/gather.hpp) over the chess
// arrays: in a time-major [T, N, ...] array rank r's games are one contiguous run of each
// time row, so rank r's whole block is, on rank 0, one struct of nine hvectors (T runs of
// n_r x width bytes at the batch's row stride, at the array's offset + lo_r x width), and
// the whole batch is one MPI_Alltoallw used as a gather (every rank needs its own receive
// type, which MPI_Gatherv cannot take). Unlike CartPole's, every array is sent: the reward
// is not a constant here.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "chess/env.hpp"

namespace chess_v6 {

inline constexpr size_t ALIGN = 64;
inline constexpr int N_ARRAYS = 9;
// Bytes per transition of each array, in spec.ARRAYS order: obs mask action reward next_obs
// next_mask terminated truncated end.
inline constexpr size_t WIDTH[N_ARRAYS] = {8 * chess::OBS_WORDS, 8 * chess::MASK_WORDS, 8, 4,
                                           8 * chess::OBS_WORDS, 8 * chess::MASK_WORDS, 1, 1, 1};
inline size_t up(size_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

struct Layout {                     // [T, ld] arrays one after the other, each 64-byte aligned
    size_t off[N_ARRAYS], total;
    Layout(size_t T, size_t ld) {
        size_t o = 0;
        for (int k = 0; k < N_ARRAYS; ++k) {
            off[k] = o;
            o = up(o + T * ld * WIDTH[k]);
        }
        total = o;
    }
    chess::BatchOut view(char* b) const {
        return {reinterpret_cast<uint64_t*>(b + off[0]), reinterpret_cast<uint64_t*>(b + off[1]),
                reinterpret_cast<int64_t*>(b + off[2]),  reinterpret_cast<float*>(b + off[3]),
                reinterpret_cast<uint64_t*>(b + off[4]), reinterpret_cast<uint64_t*>(b + off[5]),
                reinterpret_cast<bool*>(b + off[6]),     reinterpret_cast<bool*>(b + off[7]),
                reinterpret_cast<uint8_t*>(b + off[8])};
    }
};

// Games [lo, lo + n) of a [T, N] batch: for each array, T runs of n x width bytes with the
// row stride N x width, bound into one struct type.
inline MPI_Datatype rows_type(int T, int64_t N, int64_t lo, int64_t n) {
    const Layout L(static_cast<size_t>(T), static_cast<size_t>(N));
    MPI_Datatype parts[N_ARRAYS], out;
    int lens[N_ARRAYS];
    MPI_Aint disp[N_ARRAYS];
    for (int k = 0; k < N_ARRAYS; ++k) {
        const int64_t w = int64_t(WIDTH[k]);
        MPI_Type_create_hvector(T, int(n * w), MPI_Aint(N * w), MPI_BYTE, &parts[k]);
        disp[k] = MPI_Aint(L.off[k] + size_t(lo * w));
        lens[k] = 1;
    }
    MPI_Type_create_struct(N_ARRAYS, lens, disp, parts, &out);
    for (auto& t : parts) MPI_Type_free(&t);
    MPI_Type_commit(&out);
    return out;
}

struct RowTypes {                   // for one T: rank 0's receive types, or a sender's one
    std::vector<MPI_Datatype> recv;
    MPI_Datatype send = MPI_DATATYPE_NULL;
    RowTypes(int rank, int size, int T, int64_t N, const std::vector<int64_t>& lo, const std::vector<int64_t>& n) {
        if (rank == 0) {
            recv.assign(static_cast<size_t>(size), MPI_BYTE);
            for (int r = 1; r < size; ++r)
                if (n[r] > 0) recv[r] = rows_type(T, N, lo[r], n[r]);
        } else if (n[rank] > 0) {
            send = rows_type(T, n[rank], 0, n[rank]);       // its own [T, n] arrays
        }
    }
    void free() {
        for (auto& t : recv)
            if (t != MPI_BYTE) MPI_Type_free(&t);
        recv.clear();
        if (send != MPI_DATATYPE_NULL) MPI_Type_free(&send);
    }
};

// One collective: every rank's block into rank 0's `out` (its own block is already there).
inline void gather_rows(int rank, int size, char* out, const RowTypes& ty, const std::vector<int64_t>& n,
                        MPI_Comm comm) {
    const size_t P = static_cast<size_t>(size);
    std::vector<int> sc(P, 0), rc(P, 0), zd(P, 0);
    std::vector<MPI_Datatype> st(P, MPI_BYTE), rt(P, MPI_BYTE);
    if (rank == 0) {
        for (int r = 1; r < size; ++r) rc[r] = n[r] > 0 ? 1 : 0;
        MPI_Alltoallw(out, sc.data(), zd.data(), st.data(), out, rc.data(), zd.data(), ty.recv.data(), comm);
    } else {
        if (n[rank] > 0) {
            sc[0] = 1;
            st[0] = ty.send;
        }
        MPI_Alltoallw(out, sc.data(), zd.data(), st.data(), out, rc.data(), zd.data(), rt.data(), comm);
    }
}

}  // namespace chess_v6
