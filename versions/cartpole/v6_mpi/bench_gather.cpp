// v6: --bench-gather, what MPI's gathers cost on this machine (harness/cmd_mpi.py runs
// `mpirun -n 2 v6_mpi_rank --bench-gather` and reads the JSON lines of rank 0's stdout).
//
// Three measurements: MPI_Gatherv of contiguous bytes (latency and bandwidth), the MPI
// job's batch gather (core/mpi/gather.hpp: row blocks, one MPI_Alltoallw) over CartPole's
// batch (batch.hpp), and the rejected alternative
// kept here only for the comparison: 3 MPI_Gatherv of one batch with one-environment
// column datatypes, which move the same bytes in 16-, 8- and 1-byte pieces.
#include "bench_gather.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "batch.hpp"

namespace v6 {
namespace {

// ---- the datatypes of one environment's columns -----------------------------------------
// column(T, ld, elem, width, base): `width` elements of type `elem` per (t, env), row
// stride ld*width elements; `second` (bytes from the first array, or -1) adds a second
// array of the same shape to the same datatype. Resized so one "element" is one env.
MPI_Datatype env_columns(int T, int64_t ld, MPI_Datatype elem, int width, MPI_Aint elem_bytes,
                         MPI_Aint second) {
    MPI_Datatype col, both, out;
    MPI_Type_vector(T, width, static_cast<int>(std::max<int64_t>(ld, 1) * width), elem, &col);
    if (second >= 0) {
        int lens[2] = {1, 1};
        MPI_Aint disp[2] = {0, second};
        MPI_Datatype types[2] = {col, col};
        MPI_Type_create_struct(2, lens, disp, types, &both);
        MPI_Type_free(&col);
    } else {
        both = col;
    }
    MPI_Type_create_resized(both, 0, elem_bytes * width, &out);
    MPI_Type_free(&both);
    MPI_Type_commit(&out);
    return out;
}

struct BatchTypes {
    MPI_Datatype f16 = MPI_DATATYPE_NULL, i8 = MPI_DATATYPE_NULL, b1 = MPI_DATATYPE_NULL;
    BatchTypes() = default;
    BatchTypes(int T, int64_t ld) {
        const auto L = layout(T, std::max<int64_t>(ld, 1));
        f16 = env_columns(T, ld, MPI_FLOAT, 4, 4, static_cast<MPI_Aint>(L.off[NEXT_OBS] - L.off[OBS]));
        i8 = env_columns(T, ld, MPI_INT64_T, 1, 8, -1);
        b1 = env_columns(T, ld, MPI_BYTE, 1, 1, static_cast<MPI_Aint>(L.off[TRUNCATED] - L.off[TERMINATED]));
    }
    void free() {
        for (MPI_Datatype* t : {&f16, &i8, &b1})
            if (*t != MPI_DATATYPE_NULL) MPI_Type_free(t);
    }
};

// The column variant (bench only): 3 MPI_Gatherv of one batch. Rank 0: `out` is the
// [T, N] buffer (its block already in place). Others: their own [T, n_local] buffer.
void gather_batch(int rank, char* out, int T, int64_t ld, const BatchTypes& send, const BatchTypes& recv,
                  const std::vector<int>& counts, const std::vector<int>& displs, MPI_Comm comm) {
    const auto L = layout(T, std::max<int64_t>(ld, 1));
    const int mine = counts[rank];
    struct Part { size_t off; MPI_Datatype s, r; };
    const Part parts[3] = {{L.off[OBS], send.f16, recv.f16}, {L.off[ACTION], send.i8, recv.i8},
                           {L.off[TERMINATED], send.b1, recv.b1}};
    for (const Part& p : parts) {
        if (rank == 0)
            MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out + p.off, counts.data(), displs.data(),
                        p.r, 0, comm);
        else
            MPI_Gatherv(out + p.off, mine, p.s, nullptr, nullptr, nullptr, MPI_DATATYPE_NULL, 0, comm);
    }
}

// ---- timing ------------------------------------------------------------------------------
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Times `op` (a collective) one call at a time: a barrier, then the call, timed on rank 0;
// the median over calls (robust to a busy machine's scheduling hiccups). Calls go on
// until `target_s` of timing or `max_calls`; rank 0 decides when to stop for everyone.
template <class Op>
double time_collective(Op op, double target_s, int max_calls) {
    op();                                    // warm-up (connection set-up, page faults)
    std::vector<double> per;
    double spent = 0;
    for (int go = 1; go;) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        op();
        const double dt = MPI_Wtime() - t0;
        per.push_back(dt);
        spent += dt;
        go = (per.size() < 5 || (spent < target_s && static_cast<int>(per.size()) < max_calls)) ? 1 : 0;
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    double m = median(per);
    MPI_Bcast(&m, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return m;
}

}  // namespace

// ---- --bench-gather ----------------------------------------------------------------------
int bench_gather(int rank, int size, bool quick) {
    const double target = quick ? 0.02 : 0.1;
    const int samples = quick ? 200 : 1000;     // at most this many calls a size
    char host[MPI_MAX_PROCESSOR_NAME] = {0};
    int hlen = 0;
    MPI_Get_processor_name(host, &hlen);
    // 1. Contiguous bytes: each rank sends `bytes`, rank 0 receives size*bytes.
    const size_t max_bytes = quick ? (size_t(1) << 22) : (size_t(1) << 26);
    std::vector<char> sendbuf(max_bytes, static_cast<char>(rank));
    std::vector<char> recvbuf(rank == 0 ? max_bytes * size : 1);
    for (size_t bytes = 8; bytes <= max_bytes; bytes *= 4) {
        std::vector<int> counts(size, static_cast<int>(bytes)), displs(size);
        for (int r = 0; r < size; ++r) displs[r] = static_cast<int>(bytes * r);
        auto op = [&] {
            MPI_Gatherv(sendbuf.data(), static_cast<int>(bytes), MPI_BYTE, recvbuf.data(), counts.data(),
                        displs.data(), MPI_BYTE, 0, MPI_COMM_WORLD);
        };
        double s = time_collective(op, target, samples);
        if (rank == 0)
            std::printf("{\"what\": \"gather_bytes\", \"ranks\": %d, \"bytes_per_rank\": %zu, \"median_s\": %.9g, "
                        "\"host\": \"%s\"}\n", size, bytes, s, host);
        std::fflush(stdout);
    }
    // 2. The batch's gathers, T = 32, n envs a rank.
    const int T = 32;
    const int64_t max_n = quick ? 4096 : 16384;
    for (int64_t n = 1; n <= max_n; n *= 4) {
        const int64_t N = n * size;
        std::vector<int> counts(size, static_cast<int>(n)), displs(size);
        std::vector<int64_t> lo(size), cnt(size, n);
        for (int r = 0; r < size; ++r) displs[r] = static_cast<int>(n * r), lo[r] = n * r;
        std::vector<char> mine(layout(T, n).total, 1), all(rank == 0 ? layout(T, N).total : 1, 0);
        char* out = rank == 0 ? all.data() : mine.data();
        // The job's gather (row blocks, one MPI_Alltoallw) and the rejected alternative (3
        // MPI_Gatherv with one-environment column datatypes, 16/8/1-byte pieces).
        mpi_job::RowTypes rows(arrays(), rank, size, T, N, lo, cnt);
        BatchTypes send(T, n), recv = rank == 0 ? BatchTypes(T, N) : BatchTypes();
        auto op_rows = [&] { mpi_job::gather_rows(rank, size, out, rows, cnt, MPI_COMM_WORLD); };
        auto op_cols = [&] { gather_batch(rank, out, T, rank == 0 ? N : n, send, recv, counts, displs, MPI_COMM_WORLD); };
        const double s_rows = time_collective(op_rows, target, samples);
        const double s_cols = time_collective(op_cols, target, samples);
        if (rank == 0) {
            const char* what[2] = {"gather_batch", "gather_batch_columns"};
            const double sec[2] = {s_rows, s_cols};
            for (int k = 0; k < 2; ++k)
                std::printf("{\"what\": \"%s\", \"ranks\": %d, \"T\": %d, \"envs_per_rank\": %lld, "
                            "\"bytes_per_rank\": %lld, \"median_s\": %.9g, \"host\": \"%s\"}\n",
                            what[k], size, T, static_cast<long long>(n), static_cast<long long>(42 * T * n), sec[k], host);
        }
        std::fflush(stdout);
        rows.free();
        send.free();
        recv.free();
    }
    return 0;
}

}  // namespace v6
