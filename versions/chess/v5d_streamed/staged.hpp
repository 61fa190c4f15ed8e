// v5d (chess): v5's games on OpenMP threads, their rows written to the batch in streams.
// At N = 4,096 the batch is ~180 MB, far beyond the caches: v5 writes each transition's
// 1,391 bytes straight into it, and every cache line it touches is first read from memory
// (a store to a line not in cache reads it: "read for ownership"), so the batch crosses the
// memory bus twice. Here each thread plays its games in blocks of K, step by step: the
// block's K transitions of a step go to a small staging batch (in cache), whose rows are
// contiguous in the batch (rows t*N + i0 .. t*N + i0 + K - 1), and are then copied with
// non-temporal stores, which write whole lines without reading them first. Games are
// independent, so the order of play changes nothing: the batch is v5's bit for bit.
// A batch small enough to stay in cache is written as v5 writes it (stream_bytes below).
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "chess/env.hpp"
#include "threads.hpp"          // versions/chess/v5_openmp: the loop of small batches

namespace chess_v5d {

// ======== v5d's idea: a block's rows staged in cache, then streamed past it ========
// Copies n bytes, the 32-byte-aligned middle of dst with streaming stores (the caller
// fences once at the end); the unaligned ends with ordinary stores.
inline void stream_copy(void* dst, const void* src, size_t n) {
    auto* d = static_cast<char*>(dst);
    const auto* s = static_cast<const char*>(src);
#if defined(__AVX2__)
    const size_t head = std::min(n, size_t((32 - reinterpret_cast<uintptr_t>(d) % 32) % 32));
    std::memcpy(d, s, head);
    d += head, s += head, n -= head;
    for (; n >= 32; d += 32, s += 32, n -= 32)
        _mm256_stream_si256(reinterpret_cast<__m256i*>(d),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
#endif
    std::memcpy(d, s, n);
}

inline void fence() {
#if defined(__AVX2__)
    _mm_sfence();
#endif
}

template <class T>
struct Rows {      // K rows of one array, in cache
    std::unique_ptr<T[]> v;     // (not std::vector: vector<bool> is a bitset)
    size_t width;
    Rows(size_t k, size_t w) : v(new T[k * w]()), width(w) {}
    T* data() const { return v.get(); }
    void stream(T* batch, size_t row, size_t k) const {
        stream_copy(batch + row * width, data(), k * width * sizeof(T));
    }
};

struct Stage {
    Rows<uint64_t> obs, mask, next_obs, next_mask;
    Rows<int64_t> action;
    Rows<float> reward;
    Rows<bool> terminated, truncated;
    Rows<uint8_t> end;
    chess::BatchOut out;
    explicit Stage(size_t k)
        : obs(k, chess::OBS_WORDS), mask(k, chess::MASK_WORDS), next_obs(k, chess::OBS_WORDS),
          next_mask(k, chess::MASK_WORDS), action(k, 1), reward(k, 1), terminated(k, 1),
          truncated(k, 1), end(k, 1),
          out{obs.data(), mask.data(), action.data(), reward.data(), next_obs.data(), next_mask.data(),
              terminated.data(), truncated.data(), end.data()} {}
    // Rows 0..k-1 of the stage into rows row..row+k-1 of the batch.
    void stream(const chess::BatchOut& b, size_t row, size_t k) const {
        obs.stream(b.obs, row, k);
        mask.stream(b.mask, row, k);
        next_obs.stream(b.next_obs, row, k);
        next_mask.stream(b.next_mask, row, k);
        action.stream(b.action, row, k);
        reward.stream(b.reward, row, k);
        terminated.stream(b.terminated, row, k);
        truncated.stream(b.truncated, row, k);
        end.stream(b.end, row, k);
    }
};

// A transition's bytes in the batch (WORKLOAD.md: compact positions and legal masks).
constexpr size_t TRANSITION_BYTES = 2 * 8 * (chess::OBS_WORDS + chess::MASK_WORDS) + 8 + 4 + 3;
// Below this many bytes a batch fits the last-level cache, where its reader finds it: v5's
// loop, no streaming (on the committed machine, streamed: N = 20 ran 0.8x, N = 512 (23 MB)
// 1.25x). The module's set_stream_bytes changes it (the tests stream small batches with 0).
inline size_t& stream_bytes() {
    static size_t bytes = size_t(8) << 20;
    return bytes;
}
constexpr size_t K = 16;        // games a block: their states and a step's rows fit L1/L2

struct Staged {
    template <class G>
    static void run(G& gen, size_t T, size_t N, const chess::BatchOut& out, int workers) {
        if (T * N * TRANSITION_BYTES < stream_bytes()) {     // the batch stays in cache for its reader
            chess_v5::Threads::run(gen, T, N, out, workers);
            return;
        }
        const int w = int(std::min<size_t>(size_t(workers), N));
#pragma omp parallel num_threads(w)
        {
            auto qs = gen.make_scratch();       // each thread's own forward buffers
            Stage st(K);
            const size_t nt = size_t(omp_get_num_threads()), tid = size_t(omp_get_thread_num());
            const size_t g1 = N * (tid + 1) / nt;
            for (size_t i0 = N * tid / nt; i0 < g1; i0 += K) {
                const size_t k = std::min(K, g1 - i0);
                for (size_t t = 0; t < T; ++t) {
                    for (size_t j = 0; j < k; ++j) gen.step(int64_t(i0 + j), j, st.out, qs);
                    st.stream(out, t * N + i0, k);
                }
            }
            fence();                            // the streamed lines, visible to the caller
        }
    }
};
// ======== end of v5d's idea ========

}  // namespace chess_v5d
