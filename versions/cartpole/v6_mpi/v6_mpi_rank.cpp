// v6: one MPI rank of the rollout job. Started by mpirun from versions/cartpole/v6_mpi/launcher.py.
//
// Rank r owns the contiguous environments [lo_r, hi_r) of the batch and steps them with
// the shared rollout of native/include/rollout.hpp (the same function v4 and v5 call).
// Rank 0 is the learner's side: it reads commands from the Python process over a Unix
// socket (wire.hpp), broadcasts them (and new weights and epsilon) to the other ranks, and
// receives their blocks straight into the time-major [T, N, ...] arrays, which live in
// shared memory that the Python process reads as NumPy arrays. The gather that does this
// (one MPI_Alltoallw with a derived datatype a rank, no transpose pass) and the batch's
// layout are in gather.hpp.
//
// With --bench-gather the program instead measures MPI_Gatherv of contiguous bytes and
// both batch gathers and prints JSON lines on rank 0's stdout (bench_gather.cpp, read by
// harness/cmd_mpi.py).
#include <mpi.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rollout.hpp"
#include "bench_gather.hpp"
#include "gather.hpp"
#include "wire.hpp"

namespace v6 {
namespace {

// Ranks 1..P-1 wait for the next order while the learner (Python) trains: a blocking
// MPI_Bcast would busy-poll a core the whole time. Poll an MPI_Ibcast instead: spin for
// `spin_s` (back-to-back calls see no added latency), then sleep 20-200 us between polls.
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

// Rank 0's watchdog: if the Python side goes away while rank 0 is stuck in a collective
// (a hung rank), nobody would ever read the socket's EOF. A thread that only polls the
// socket for hang-up ends rank 0 then, and mpirun takes the rest of the job down.
std::atomic<bool> g_quitting{false};

void watch_socket(int fd) {
    for (;;) {
        pollfd p{fd, POLLRDHUP, 0};
        const int k = ::poll(&p, 1, 500);
        if (g_quitting.load()) return;
        if (k > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))) {
            std::fprintf(stderr, "v6_mpi rank 0: the Python side is gone; ending the job\n");
            std::fflush(stderr);
            ::_exit(4);
        }
    }
}

[[noreturn]] void die(const char* why) {
    std::fprintf(stderr, "v6_mpi rank 0: %s; aborting the job\n", why);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    std::exit(3);
}

// The deadline of the Python side (launcher.py) needs what one transition costs here:
// step scratch copies of 1, 2, 4, ... of this rank's environments once, until a step
// takes CALIBRATE_S or the whole slice is used, and return seconds per transition. The
// real environments are not touched.
constexpr double CALIBRATE_S = 0.002;

double calibrate(const study::cartpole::Env* env, const study::EnvKeys* keys, int64_t n,
                 const study::MLP* mlp, double epsilon) {
    double per = 0;
    for (int64_t m = 1;; m = std::min(n, 2 * m)) {
        std::vector<study::cartpole::Env> e(env, env + m);
        std::vector<study::EnvKeys> k(keys, keys + m);
        const Layout L(1, static_cast<size_t>(m));
        std::vector<char> buf(L.total);
        const double t0 = MPI_Wtime();
        study::rollout_range(e.data(), k.data(), m, 1, mlp, epsilon, L.view(buf.data(), m));
        const double dt = MPI_Wtime() - t0;
        per = std::max(dt / static_cast<double>(m), 0.5 * per);
        if (dt >= CALIBRATE_S || m >= n) return per;
    }
}

// ---- the rollout job ---------------------------------------------------------------------
int run_job(int rank, int size, const char* sock_path, int64_t N, uint64_t seed, bool egreedy) {
    const char* spin_env = std::getenv("V6_MPI_SPIN_US");
    const double spin_s = (spin_env ? std::atof(spin_env) : 200.0) * 1e-6;
    std::vector<int> counts(size), displs(size);
    for (int r = 0; r < size; ++r) {
        const int64_t lo = N * r / size, hi = N * (r + 1) / size;
        displs[r] = static_cast<int>(lo);
        counts[r] = static_cast<int>(hi - lo);
    }
    const int64_t lo = displs[rank], n = counts[rank];
    std::vector<study::cartpole::Env> env(static_cast<size_t>(std::max<int64_t>(n, 1)));
    std::vector<study::EnvKeys> keys(env.size());
    study::init_range(seed, lo, lo + n, env.data(), keys.data());

    // Who is where (for the Python side's clean-up and for the record).
    char host[MPI_MAX_PROCESSOR_NAME] = {0};
    int hlen = 0;
    MPI_Get_processor_name(host, &hlen);
    std::vector<char> hosts(static_cast<size_t>(size) * MPI_MAX_PROCESSOR_NAME);
    std::vector<long long> pids(size);
    long long pid = ::getpid();
    MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
               MPI_COMM_WORLD);
    MPI_Gather(&pid, 1, MPI_LONG_LONG, pids.data(), 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);

    int fd = -1;
    if (rank == 0) {
        fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, sock_path, sizeof(addr.sun_path) - 1);
        if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
            die("cannot connect to the Python side's socket");
        std::string hello = "{\"ranks\": " + std::to_string(size) + ", \"pids\": [";
        for (int r = 0; r < size; ++r) hello += (r ? ", " : "") + std::to_string(pids[r]);
        hello += "], \"hosts\": [";
        for (int r = 0; r < size; ++r)
            hello += std::string(r ? ", " : "") + "\"" + std::string(&hosts[r * MPI_MAX_PROCESSOR_NAME]) + "\"";
        hello += "], \"lo\": [";
        for (int r = 0; r < size; ++r) hello += (r ? ", " : "") + std::to_string(displs[r]);
        hello += "]}";
        if (!reply(fd, 0, 0, 0, 0, hello)) die("cannot greet the Python side");
        std::thread(watch_socket, fd).detach();
    }

    char* shm = nullptr;            // rank 0: the batch buffer shared with Python
    size_t shm_size = 0;
    int64_t shm_T = 0;
    std::vector<char> local;        // ranks > 0: their own [T, n] block
    std::unique_ptr<study::MLP> mlp;
    std::vector<float> wbuf;
    std::map<int, RowTypes> types;   // T -> this rank's datatypes for the gather

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
            if (c.cmd == C_MAP) {                          // rank 0 only: (re)map the shared buffer
                std::string path(payload.begin(), payload.end());
                const size_t want = Layout(c.T, N).total;
                int sfd = ::open(path.c_str(), O_RDWR);
                struct stat st{};
                if (sfd < 0 || ::fstat(sfd, &st) != 0 || static_cast<size_t>(st.st_size) < want) {
                    if (sfd >= 0) ::close(sfd);
                    if (!reply(fd, 1, 0, 0, 0, "cannot open the shared buffer " + path)) die("socket");
                    continue;
                }
                void* p = ::mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_SHARED, sfd, 0);
                ::close(sfd);
                if (p == MAP_FAILED) {
                    if (!reply(fd, 1, 0, 0, 0, "cannot map the shared buffer")) die("socket");
                    continue;
                }
                if (shm) ::munmap(shm, shm_size);
                shm = static_cast<char*>(p);
                shm_size = want;
                shm_T = c.T;
                if (!reply(fd, 0, 0, 0, MPI_Wtime() - t_start, "")) die("socket");
                continue;
            }
            if (c.cmd != C_GENERATE && c.cmd != C_CALIBRATE && c.cmd != C_QUIT) {
                if (!reply(fd, 1, 0, 0, 0, "unknown command")) die("socket");
                continue;
            }
            ord.cmd = static_cast<int32_t>(c.cmd);
            ord.T = static_cast<int32_t>(c.T);
            ord.H = static_cast<int32_t>(c.H);
            ord.epsilon = c.epsilon;
            ord.has_weights = c.payload > 0 ? 1 : 0;
            if (ord.cmd == C_GENERATE && (ord.T <= 0 || ord.T > shm_T || !shm)) {
                if (!reply(fd, 1, 0, 0, 0, "T exceeds the mapped buffer")) die("socket");
                continue;
            }
            if (ord.has_weights) {
                const size_t H = static_cast<size_t>(ord.H);
                const size_t want = (4 * H + H + H * H + H + 2 * H + 2) * sizeof(float);
                if (c.payload != want) {
                    if (!reply(fd, 1, 0, 0, 0, "weights payload has the wrong size")) die("socket");
                    continue;
                }
            }
        }
        MPI_Request req;
        MPI_Ibcast(&ord, sizeof ord, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
        if (rank == 0) MPI_Wait(&req, MPI_STATUS_IGNORE);
        else wait_politely(&req, spin_s);
        if (ord.cmd == C_QUIT) {
            g_quitting = true;
            break;
        }
        if (ord.cmd != C_GENERATE && ord.cmd != C_CALIBRATE) continue;
        if (ord.has_weights) {             // new policy weights: broadcast, then rebuild the MLP
            const size_t H = static_cast<size_t>(ord.H);
            wbuf.resize(4 * H + H + H * H + H + 2 * H + 2);
            if (rank == 0) std::memcpy(wbuf.data(), payload.data(), wbuf.size() * sizeof(float));
            MPI_Bcast(wbuf.data(), static_cast<int>(wbuf.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
            const float* w = wbuf.data();
            const float *w1 = w, *b1 = w1 + 4 * H, *w2 = b1 + H, *b2 = w2 + H * H, *w3 = b2 + H, *b3 = w3 + 2 * H;
            mlp = std::make_unique<study::MLP>(ord.H, w1, b1, w2, b2, w3, b3);
        }
        if (ord.cmd == C_CALIBRATE) {       // seconds per transition, the slowest rank's
            if (egreedy && !mlp) die("egreedy policy without weights");
            double mine = n > 0 ? calibrate(env.data(), keys.data(), n, egreedy ? mlp.get() : nullptr,
                                            ord.epsilon) : 0.0;
            double worst = 0;
            MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0 && !reply(fd, 0, 0, 0, MPI_Wtime() - t_start, "", worst))
                die("the Python side is gone");
            continue;
        }
        const int T = ord.T;
        auto it = types.find(T);
        if (it == types.end()) {
            if (types.size() > 8) {                         // a learner that varies T: keep few
                for (auto& kv : types) kv.second.free();
                types.clear();
            }
            it = types.emplace(T, RowTypes(rank, size, T, N, counts, displs)).first;
        }
        char* out;
        int64_t ld;
        if (rank == 0) {
            out = shm;
            ld = N;
            std::fill_n(reinterpret_cast<float*>(shm + Layout(T, N).reward), static_cast<size_t>(T) * N, 1.0f);
        } else {
            const size_t need = Layout(T, std::max<int64_t>(n, 1)).total;
            if (local.size() < need) local.resize(need);
            out = local.data();
            ld = std::max<int64_t>(n, 1);
        }
        const double t0 = MPI_Wtime();
        if (n > 0) {
            const study::MLP* m = egreedy ? mlp.get() : nullptr;
            if (egreedy && !m) die("egreedy policy without weights");
            study::rollout_range(env.data(), keys.data(), n, T, m, ord.epsilon, Layout(T, ld).view(out, ld));
        }
        const double t1 = MPI_Wtime();
        gather_rows(rank, size, out, it->second, counts, MPI_COMM_WORLD);
        const double t2 = MPI_Wtime();
        // For the record of where the time goes: the slowest rank's rollout (one double each;
        // the gather above already waited for every rank, so this costs a latency, ~1 us).
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
}  // namespace v6

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char* sock = nullptr;
    int64_t N = 0;
    uint64_t seed = 0;
    bool egreedy = false, bench = false, quick = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> const char* {
            if (i + 1 >= argc) { std::fprintf(stderr, "missing value for %s\n", a.c_str()); MPI_Abort(MPI_COMM_WORLD, 2); }
            return argv[++i];
        };
        if (a == "--socket") sock = next();
        else if (a == "--envs") N = std::strtoll(next(), nullptr, 10);
        else if (a == "--seed") seed = std::strtoull(next(), nullptr, 10);
        else if (a == "--policy") egreedy = std::string(next()) == "egreedy";
        else if (a == "--bench-gather") bench = true;
        else if (a == "--quick") quick = true;
        else { std::fprintf(stderr, "unknown argument %s\n", a.c_str()); MPI_Abort(MPI_COMM_WORLD, 2); }
    }
    int rc;
    if (bench) {
        rc = v6::bench_gather(rank, size, quick);
    } else {
        if (!sock || N <= 0) { std::fprintf(stderr, "need --socket PATH --envs N\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
        rc = v6::run_job(rank, size, sock, N, seed, egreedy);
    }
    MPI_Finalize();
    return rc;
}
