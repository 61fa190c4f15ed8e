// v6 (chess): one MPI rank of the chess batch. Started by mpirun from launcher.py.
//
// Rank r owns the contiguous games [lo_r, hi_r) of the batch and plays them with v5c's
// generator: the chess core's Generator (common/include/chess/env.hpp) with v5b's sparse
// network summed in v5c's register blocks, each game's T moves in order, as one of v5's
// threads does. Rank 0 is the learner's side: it reads commands from the Python process
// over a Unix socket (CartPole v6's wire format, wire.hpp), broadcasts them (with new
// weights and epsilon) to the other ranks, and receives their blocks straight into the
// time-major arrays in shared memory that Python reads as NumPy arrays (gather.hpp).
//
// Every rank builds all N games (the Generator draws game i's RNG keys from its index in
// the whole batch and has no constructor for a range) and steps only its own.
#include <mpi.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "blocked.hpp"        // versions/chess/v5c_blocked_sparse
#include "gather.hpp"
#include "sparse_qnet.hpp"    // versions/chess/v5b_sparse_net
#include "wire.hpp"           // versions/cartpole/v6_mpi

namespace chess_v6 {
namespace {

using Impl = chess_v5b::SparseNet<chess_v5c::Blocked>;    // v5c's network

// The Generator owns its network; this handle lets the real games and calibration's
// scratch games share one (the same floats, no second copy of 6 MB of weights).
struct SharedNet {
    using Scratch = Impl::Scratch;
    std::shared_ptr<const Impl> impl;
    int hidden() const { return impl->hidden(); }
    int greedy(const uint64_t* obs, const uint64_t* mask, Scratch& s) const { return impl->greedy(obs, mask, s); }
};
using Gen = chess::Generator<SharedNet>;

std::atomic<bool> g_quitting{false};

// Ranks 1..P-1 wait for the next order while the learner trains: spin on an MPI_Ibcast
// for spin_s, then sleep between polls (CartPole v6's wait).
void wait_politely(MPI_Request* req, double spin_s) {
    int done = 0;
    const double t0 = MPI_Wtime();
    for (;;) {
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (done) return;
        const double waited = MPI_Wtime() - t0;
        if (waited > spin_s) {
            timespec ts{0, waited < 0.01 ? 20000L : 200000L};
            nanosleep(&ts, nullptr);
        }
    }
}

// Rank 0's watchdog: ends the job when the Python side goes away, even while rank 0 is
// stuck in a collective waiting for a hung rank.
void watch_socket(int fd) {
    for (;;) {
        pollfd p{fd, POLLRDHUP, 0};
        const int k = ::poll(&p, 1, 500);
        if (g_quitting.load()) return;
        if (k > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))) {
            std::fprintf(stderr, "v6_mpi (chess) rank 0: the Python side is gone; ending the job\n");
            std::fflush(stderr);
            ::_exit(4);
        }
    }
}

[[noreturn]] void die(const char* why) {
    std::fprintf(stderr, "v6_mpi (chess) rank 0: %s; aborting the job\n", why);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    std::exit(3);
}

// Games [lo, lo + n) of `gen`, all T moves of each in turn, into a [T, ld] batch whose
// column col0 holds game lo.
void play(Gen& gen, int64_t lo, int64_t n, int T, const chess::BatchOut& out, int64_t ld, int64_t col0) {
    auto qs = gen.make_scratch();
    for (int64_t i = 0; i < n; ++i)
        for (int t = 0; t < T; ++t) gen.step(lo + i, size_t(t) * size_t(ld) + size_t(col0 + i), out, qs);
}

// Seconds per transition on this rank, for the Python side's deadline: scratch games
// (up to 64, the rank's real games untouched) stepped until CALIBRATE_S has passed.
constexpr double CALIBRATE_S = 0.002;
double calibrate(int64_t n, uint64_t seed, bool egreedy, double epsilon, const std::shared_ptr<const Impl>& net) {
    const int64_t m = std::min<int64_t>(n, 64);
    Gen g(m, seed, egreedy, epsilon);
    if (egreedy) g.set_net(std::make_unique<SharedNet>(SharedNet{net}));
    const Layout L(1, static_cast<size_t>(m));
    std::vector<char> buf(L.total);
    int steps = 0;
    const double t0 = MPI_Wtime();
    double dt = 0;
    do {
        play(g, 0, m, 1, L.view(buf.data()), m, 0);
        ++steps;
        dt = MPI_Wtime() - t0;
    } while (dt < CALIBRATE_S && steps < 1000);
    return dt / double(m * steps);
}

size_t weight_floats(size_t H) {
    return H * chess::OBS_DIM + H + H * H + H + size_t(chess::N_ACTIONS) * H + size_t(chess::N_ACTIONS);
}

std::string greeting(int rank, int size, const std::vector<int64_t>& lo) {
    char host[MPI_MAX_PROCESSOR_NAME] = {0};
    int hlen = 0;
    MPI_Get_processor_name(host, &hlen);
    const size_t P = static_cast<size_t>(size);
    std::vector<char> hosts(P * MPI_MAX_PROCESSOR_NAME);
    std::vector<long long> pids(P);
    long long pid = ::getpid();
    MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
               MPI_COMM_WORLD);
    MPI_Gather(&pid, 1, MPI_LONG_LONG, pids.data(), 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank != 0) return "";
    std::string s = "{\"ranks\": " + std::to_string(size) + ", \"pids\": [";
    for (int r = 0; r < size; ++r) s += (r ? ", " : "") + std::to_string(pids[r]);
    s += "], \"hosts\": [";
    for (int r = 0; r < size; ++r)
        s += std::string(r ? ", " : "") + "\"" + std::string(&hosts[size_t(r) * MPI_MAX_PROCESSOR_NAME]) + "\"";
    s += "], \"lo\": [";
    for (int r = 0; r < size; ++r) s += (r ? ", " : "") + std::to_string(lo[r]);
    return s + "]}";
}

// ---- the job: rank 0's command loop, every rank's part of each command ----------------------
int run_job(int rank, int size, const char* sock_path, int64_t N, uint64_t seed, bool egreedy) {
    using namespace v6;                          // wire.hpp: Cmd, Order, reply, read_all
    const char* spin_env = std::getenv("V6_MPI_SPIN_US");
    const double spin_s = (spin_env ? std::atof(spin_env) : 200.0) * 1e-6;
    const size_t P = static_cast<size_t>(size);
    std::vector<int64_t> lo(P), cnt(P);
    for (int r = 0; r < size; ++r) {
        lo[r] = N * r / size;
        cnt[r] = N * (r + 1) / size - lo[r];
    }
    const int64_t n = cnt[rank];
    Gen gen(N, seed, egreedy, 0.0);
    const std::string hello = greeting(rank, size, lo);

    int fd = -1;
    if (rank == 0) {
        fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, sock_path, sizeof(addr.sun_path) - 1);
        if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
            die("cannot connect to the Python side's socket");
        if (!reply(fd, 0, 0, 0, 0, hello)) die("cannot greet the Python side");
        std::thread(watch_socket, fd).detach();
    }

    char* shm = nullptr;                          // rank 0: the batch shared with Python
    size_t shm_size = 0;
    int64_t shm_T = 0;
    std::vector<char> local;                      // ranks > 0: their own [T, n] block
    std::shared_ptr<const Impl> net;
    std::vector<float> wbuf;
    std::map<int, RowTypes> types;                // T -> this rank's gather datatypes

    for (;;) {
        Order ord{};
        std::vector<char> payload;
        double t_start = 0;
        if (rank == 0) {
            Cmd c;
            if (!read_all(fd, &c, sizeof c)) die("the Python side closed the socket");
            if (std::memcmp(c.magic, "V6MC", 4) != 0) die("garbled command");
            payload.resize(c.payload);
            if (c.payload && !read_all(fd, payload.data(), c.payload)) die("the Python side closed the socket");
            t_start = MPI_Wtime();
            if (c.cmd == C_MAP) {                 // rank 0 only: (re)map the shared buffer
                const std::string path(payload.begin(), payload.end());
                const size_t want = Layout(c.T, size_t(N)).total;
                const int sfd = ::open(path.c_str(), O_RDWR);
                struct stat st{};
                void* p = MAP_FAILED;
                if (sfd >= 0 && ::fstat(sfd, &st) == 0 && size_t(st.st_size) >= want)
                    p = ::mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_SHARED, sfd, 0);
                if (sfd >= 0) ::close(sfd);
                if (p == MAP_FAILED) {
                    if (!reply(fd, 1, 0, 0, 0, "cannot map the shared buffer " + path)) die("socket");
                    continue;
                }
                if (shm) ::munmap(shm, shm_size);
                shm = static_cast<char*>(p);
                shm_size = want;
                shm_T = c.T;
                if (!reply(fd, 0, 0, 0, MPI_Wtime() - t_start, "")) die("socket");
                continue;
            }
            const char* bad = nullptr;
            if (c.cmd != C_GENERATE && c.cmd != C_CALIBRATE && c.cmd != C_QUIT) bad = "unknown command";
            else if (c.cmd == C_GENERATE && (c.T == 0 || int64_t(c.T) > shm_T || !shm))
                bad = "T exceeds the mapped buffer";
            else if (c.payload && (c.H == 0 || c.payload != weight_floats(c.H) * sizeof(float)))
                bad = "weights payload has the wrong size";
            if (bad) {
                if (!reply(fd, 1, 0, 0, 0, bad)) die("socket");
                continue;
            }
            ord.cmd = int32_t(c.cmd);
            ord.T = int32_t(c.T);
            ord.H = int32_t(c.H);
            ord.epsilon = c.epsilon;
            ord.has_weights = c.payload > 0 ? 1 : 0;
        }
        MPI_Request req;
        MPI_Ibcast(&ord, sizeof ord, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
        if (rank == 0) MPI_Wait(&req, MPI_STATUS_IGNORE);
        else wait_politely(&req, spin_s);
        if (ord.cmd == C_QUIT) {
            g_quitting = true;
            break;
        }
        if (ord.has_weights) {                    // new weights: broadcast, rebuild the network
            const size_t H = size_t(ord.H);
            wbuf.resize(weight_floats(H));
            if (rank == 0) std::memcpy(wbuf.data(), payload.data(), wbuf.size() * sizeof(float));
            payload = std::vector<char>();
            MPI_Bcast(wbuf.data(), int(wbuf.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
            const float* w1 = wbuf.data();
            const float *b1 = w1 + H * chess::OBS_DIM, *w2 = b1 + H, *b2 = w2 + H * H, *w3 = b2 + H,
                        *b3 = w3 + size_t(chess::N_ACTIONS) * H;
            net = std::make_shared<const Impl>(ord.H, w1, b1, w2, b2, w3, b3);
            gen.set_net(std::make_unique<SharedNet>(SharedNet{net}));
            wbuf = std::vector<float>();          // the network holds its own (transposed) copy
        }
        if (egreedy && !net) die("egreedy policy without weights");
        gen.set_epsilon(ord.epsilon);
        if (ord.cmd == C_CALIBRATE) {             // seconds per transition, the slowest rank's
            double mine = n > 0 ? calibrate(n, seed, egreedy, ord.epsilon, net) : 0.0, worst = 0;
            MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0 && !reply(fd, 0, 0, 0, MPI_Wtime() - t_start, "", worst)) die("the Python side is gone");
            continue;
        }
        const int T = ord.T;
        auto it = types.find(T);
        if (it == types.end()) {
            if (types.size() > 8) {               // a learner that varies T: keep few
                for (auto& kv : types) kv.second.free();
                types.clear();
            }
            it = types.emplace(T, RowTypes(rank, size, T, N, lo, cnt)).first;
        }
        char* out = shm;
        int64_t ld = N, col0 = lo[rank];
        if (rank != 0) {
            ld = std::max<int64_t>(n, 1);
            col0 = 0;
            const size_t need = Layout(size_t(T), size_t(ld)).total;
            if (local.size() < need) local.resize(need);
            out = local.data();
        }
        const double t0 = MPI_Wtime();
        play(gen, lo[rank], n, T, Layout(size_t(T), size_t(ld)).view(out), ld, col0);
        const double t1 = MPI_Wtime();
        gather_rows(rank, size, out, it->second, cnt, MPI_COMM_WORLD);
        const double t2 = MPI_Wtime();
        double mine_s = t1 - t0, slowest_s = 0;
        MPI_Reduce(&mine_s, &slowest_s, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0 && !reply(fd, 0, t1 - t0, t2 - t1, MPI_Wtime() - t_start, "", slowest_s))
            die("the Python side is gone");
    }
    for (auto& kv : types) kv.second.free();
    if (shm) ::munmap(shm, shm_size);
    if (fd >= 0) ::close(fd);
    return 0;
}

}  // namespace
}  // namespace chess_v6

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char* sock = nullptr;
    int64_t N = 0;
    uint64_t seed = 0;
    bool egreedy = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) {
            std::fprintf(stderr, "missing value for %s\n", a.c_str());
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        const char* v = argv[++i];
        if (a == "--socket") sock = v;
        else if (a == "--envs") N = std::strtoll(v, nullptr, 10);
        else if (a == "--seed") seed = std::strtoull(v, nullptr, 10);
        else if (a == "--policy") egreedy = std::string(v) == "egreedy";
        else {
            std::fprintf(stderr, "unknown argument %s\n", a.c_str());
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (!sock || N <= 0) {
        std::fprintf(stderr, "need --socket PATH --envs N\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int rc = chess_v6::run_job(rank, size, sock, N, seed, egreedy);
    MPI_Finalize();
    return rc;
}
