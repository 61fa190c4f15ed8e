// The MPI job of every workload: a batch's arrays in one buffer, and the gather that lands
// every rank's block of environments in it (serve.hpp calls it once a batch).
//
// A workload's batch is K arrays, time-major [T, N, ...] each, one after another, each
// 64-byte aligned (protocol.py's layout(); keep the two in step); an Arrays says how many
// bytes one transition takes in each and whether it is sent (an array that is the same
// everywhere, CartPole's reward, is filled on rank 0 instead).
//
// The gather: in a time-major array a rank's environments are not contiguous, but its part
// of each time row is (n_r environments side by side). So rank r's block is described, on
// rank 0, by one derived datatype: for each sent array an hvector of T runs of n_r x width
// bytes with the batch's row stride, at that array's offset + lo_r x width, all bound into
// a struct. Each sender's datatype is the same construction over its own [T, n_r] arrays.
// The whole batch is one collective, which MPI unpacks into place (no transpose pass, no
// per-transition messages). Since every rank needs its own receive datatype (n_r, lo_r
// differ) and MPI_Gatherv takes only one, the collective is MPI_Alltoallw used as a gather
// (only the counts towards rank 0 are non-zero). Rank 0's own block is written in place.
// CartPole v6's NOTES.md measures the alternative (columns of one environment, Gatherv).
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mpi_job {

inline constexpr size_t ALIGN = 64;
inline size_t up(size_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

struct Arrays {                      // what a workload's batch is made of
    std::vector<size_t> width;       // bytes per transition, in the batch's order
    std::vector<bool> sent;          // false: not gathered (the workload fills it on rank 0)
};

struct Layout {                      // [T, ld] arrays one after the other, each 64-byte aligned
    std::vector<size_t> off;
    size_t total = 0;
    Layout(const Arrays& a, size_t T, size_t ld) : off(a.width.size()) {
        size_t o = 0;
        for (size_t k = 0; k < a.width.size(); ++k) {
            off[k] = o;
            o = up(o + T * ld * a.width[k]);
        }
        total = o;
    }
};

// Environments [lo, lo + n) of a [T, N] batch: for each sent array, T runs of n x width
// bytes with the row stride N x width, bound into one struct type.
inline MPI_Datatype rows_type(const Arrays& a, int T, int64_t N, int64_t lo, int64_t n) {
    const Layout L(a, static_cast<size_t>(T), static_cast<size_t>(N));
    std::vector<MPI_Datatype> parts;
    std::vector<int> lens;
    std::vector<MPI_Aint> disp;
    for (size_t k = 0; k < a.width.size(); ++k) {
        if (!a.sent[k]) continue;
        const int64_t w = static_cast<int64_t>(a.width[k]);
        parts.emplace_back();
        MPI_Type_create_hvector(T, static_cast<int>(n * w), static_cast<MPI_Aint>(N * w), MPI_BYTE, &parts.back());
        disp.push_back(static_cast<MPI_Aint>(L.off[k] + static_cast<size_t>(lo * w)));
        lens.push_back(1);
    }
    MPI_Datatype out;
    MPI_Type_create_struct(static_cast<int>(parts.size()), lens.data(), disp.data(), parts.data(), &out);
    for (auto& t : parts) MPI_Type_free(&t);
    MPI_Type_commit(&out);
    return out;
}

struct RowTypes {                    // for one T: rank 0's receive types, or a sender's one
    std::vector<MPI_Datatype> recv;
    MPI_Datatype send = MPI_DATATYPE_NULL;
    RowTypes(const Arrays& a, int rank, int size, int T, int64_t N, const std::vector<int64_t>& lo,
             const std::vector<int64_t>& n) {
        if (rank == 0) {
            recv.assign(static_cast<size_t>(size), MPI_BYTE);
            for (int r = 1; r < size; ++r)
                if (n[r] > 0) recv[r] = rows_type(a, T, N, lo[r], n[r]);
        } else if (n[rank] > 0) {
            send = rows_type(a, T, n[rank], 0, n[rank]);     // its own [T, n] arrays
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
// Others pass their local [T, n] buffer.
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

}  // namespace mpi_job
