// A standalone perft driver over the chess core, for the verification's mutation test
// (tests/test_chess_native.py builds it with -DCHESS_MUTATION=1..3) and for timing:
//     perft_cli "<fen>" <depth>   ->   "<nodes> <seconds>"
// A bad FEN prints its reason and exits 1.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "chess/movegen.hpp"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s FEN DEPTH\n", argv[0]);
        return 2;
    }
    try {
        const chess::Position p = chess::Position::from_fen(argv[1]);
        const int depth = std::atoi(argv[2]);
        const auto t0 = std::chrono::steady_clock::now();
        const uint64_t n = chess::perft(p, depth);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("%llu %.6f\n", static_cast<unsigned long long>(n), s);
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
