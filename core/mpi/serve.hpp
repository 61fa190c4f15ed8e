// The MPI job of every workload: one rank's program, started by mpirun from
// core/mpi/generator.py. A workload's rank program is its Work (below) and a main that
// calls run<Work>() (versions/<workload>/v6_mpi/).
//
// Rank r owns the contiguous environments [lo_r, hi_r) of the batch and steps them with
// the workload's code. Rank 0 is the learner's side: it reads commands from the Python
// process over a Unix socket (wire.hpp), broadcasts them (and new weights and epsilon) to
// the other ranks, and receives their blocks straight into the time-major arrays, which
// live in shared memory that the Python process reads as NumPy arrays (gather.hpp).
//
// A Work is constructed as Work(N, lo, n, seed, egreedy) on every rank and gives:
//   static Arrays arrays();                    the batch's arrays (gather.hpp)
//   static size_t weight_floats(size_t H);     floats of a weights payload for H hidden units
//   void set_weights(int H, const float* w);   a new policy (every rank, after the broadcast)
//   bool ready() const;                        false: an egreedy policy still has no weights
//   void set_epsilon(double e);
//   double seconds_per_transition();           calibration on scratch copies (n > 0)
//   void fill_unsent(char* batch, int T);      rank 0, before its rollout: the unsent arrays
//   void play(int T, char* out, int64_t ld, int64_t col0);   its n environments x T steps
//                                              into a [T, ld] batch, environment lo at col0
#pragma once
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
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "gather.hpp"
#include "wire.hpp"

namespace mpi_job {

inline const char* g_name = "mpi job";          // the program's name in its messages
inline std::atomic<bool> g_quitting{false};

// Ranks 1..P-1 wait for the next order while the learner (Python) trains: a blocking
// MPI_Bcast would busy-poll a core the whole time. Poll an MPI_Ibcast instead: spin for
// `spin_s` (back-to-back calls see no added latency), then sleep 20-200 us between polls.
inline void wait_politely(MPI_Request* req, double spin_s) {
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
inline void watch_socket(int fd) {
    for (;;) {
        pollfd p{fd, POLLRDHUP, 0};
        const int k = ::poll(&p, 1, 500);
        if (g_quitting.load()) return;
        if (k > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))) {
            std::fprintf(stderr, "%s rank 0: the Python side is gone; ending the job\n", g_name);
            std::fflush(stderr);
            ::_exit(4);
        }
    }
}

[[noreturn]] inline void die(const char* why) {
    std::fprintf(stderr, "%s rank 0: %s; aborting the job\n", g_name, why);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    std::exit(3);
}

[[noreturn]] inline void usage(const std::string& why) {
    std::fprintf(stderr, "%s: %s\n", g_name, why.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
    std::exit(2);
}

// Who is where, for the Python side's clean-up and for the record (JSON; "" off rank 0).
inline std::string greeting(int rank, int size, const std::vector<int64_t>& lo) {
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

// Rank 0: connect to the Python side's socket and greet it.
inline int connect_back(const char* path, const std::string& hello) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path, sizeof(addr.sun_path) - 1);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
        die("cannot connect to the Python side's socket");
    if (!reply(fd, 0, 0, 0, 0, hello)) die("cannot greet the Python side");
    std::thread(watch_socket, fd).detach();
    return fd;
}

struct Args {
    const char* socket = nullptr;
    int64_t envs = 0;
    uint64_t seed = 0;
    bool egreedy = false;
};

// --socket PATH --envs N --seed S --policy random|egreedy; `flag(name)` takes a program's
// own valueless flags (true: taken).
template <class Flag>
Args parse_args(int argc, char** argv, Flag flag) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        if (flag(k)) continue;
        if (k != "--socket" && k != "--envs" && k != "--seed" && k != "--policy") usage("unknown argument " + k);
        if (i + 1 >= argc) usage("missing value for " + k);
        const char* v = argv[++i];
        if (k == "--socket") a.socket = v;
        else if (k == "--envs") a.envs = std::strtoll(v, nullptr, 10);
        else if (k == "--seed") a.seed = std::strtoull(v, nullptr, 10);
        else a.egreedy = std::string(v) == "egreedy";
    }
    return a;
}

// Rank 0 (re)maps the shared batch buffer the Python side made; an error message or "".
struct Shared {
    char* base = nullptr;
    size_t bytes = 0;
    int64_t T = 0;
    std::string map(const std::string& path, size_t want, int64_t T_) {
        const int sfd = ::open(path.c_str(), O_RDWR);
        struct stat st{};
        void* p = MAP_FAILED;
        if (sfd >= 0 && ::fstat(sfd, &st) == 0 && static_cast<size_t>(st.st_size) >= want)
            p = ::mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_SHARED, sfd, 0);
        if (sfd >= 0) ::close(sfd);
        if (p == MAP_FAILED) return "cannot map the shared buffer " + path;
        if (base) ::munmap(base, bytes);
        base = static_cast<char*>(p);
        bytes = want;
        T = T_;
        return "";
    }
    ~Shared() {
        if (base) ::munmap(base, bytes);
    }
};

// ---- the job: rank 0's command loop, every rank's part of each command --------------------
template <class Work>
int serve(int rank, int size, const Args& a) {
    if (!a.socket || a.envs <= 0) usage("need --socket PATH --envs N");
    const char* spin_env = std::getenv("V6_MPI_SPIN_US");
    const double spin_s = (spin_env ? std::atof(spin_env) : 200.0) * 1e-6;
    const int64_t N = a.envs;
    const size_t P = static_cast<size_t>(size);
    std::vector<int64_t> lo(P), cnt(P);
    for (int r = 0; r < size; ++r) {
        lo[r] = N * r / size;
        cnt[r] = N * (r + 1) / size - lo[r];
    }
    const int64_t n = cnt[rank];
    const Arrays arrays = Work::arrays();
    Work work(N, lo[rank], n, a.seed, a.egreedy);
    const std::string hello = greeting(rank, size, lo);
    const int fd = rank == 0 ? connect_back(a.socket, hello) : -1;

    Shared shm;                                   // rank 0: the batch shared with Python
    std::vector<char> local;                      // ranks > 0: their own [T, n] block
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
                const std::string why = shm.map(std::string(payload.begin(), payload.end()),
                                                 Layout(arrays, c.T, static_cast<size_t>(N)).total, c.T);
                if (!reply(fd, why.empty() ? 0 : 1, 0, 0, why.empty() ? MPI_Wtime() - t_start : 0, why))
                    die("socket");
                continue;
            }
            const char* bad = nullptr;
            if (c.cmd != C_GENERATE && c.cmd != C_CALIBRATE && c.cmd != C_QUIT) bad = "unknown command";
            else if (c.cmd == C_GENERATE && (c.T == 0 || static_cast<int64_t>(c.T) > shm.T || !shm.base))
                bad = "T exceeds the mapped buffer";
            else if (c.payload && (c.H == 0 || c.payload != Work::weight_floats(c.H) * sizeof(float)))
                bad = "weights payload has the wrong size";
            if (bad) {
                if (!reply(fd, 1, 0, 0, 0, bad)) die("socket");
                continue;
            }
            ord.cmd = static_cast<int32_t>(c.cmd);
            ord.T = static_cast<int32_t>(c.T);
            ord.H = static_cast<int32_t>(c.H);
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
        if (ord.has_weights) {                    // new weights: broadcast, rebuild the policy
            wbuf.resize(Work::weight_floats(static_cast<size_t>(ord.H)));
            if (rank == 0) std::memcpy(wbuf.data(), payload.data(), wbuf.size() * sizeof(float));
            payload = std::vector<char>();
            MPI_Bcast(wbuf.data(), static_cast<int>(wbuf.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
            work.set_weights(ord.H, wbuf.data());
            wbuf = std::vector<float>();          // the policy holds its own copy
        }
        if (!work.ready()) die("egreedy policy without weights");
        work.set_epsilon(ord.epsilon);
        if (ord.cmd == C_CALIBRATE) {             // seconds per transition, the slowest rank's
            double mine = n > 0 ? work.seconds_per_transition() : 0.0, worst = 0;
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
            it = types.emplace(T, RowTypes(arrays, rank, size, T, N, lo, cnt)).first;
        }
        char* out = shm.base;
        int64_t ld = N, col0 = lo[rank];
        if (rank == 0) {
            work.fill_unsent(out, T);
        } else {
            ld = std::max<int64_t>(n, 1);
            col0 = 0;
            const size_t need = Layout(arrays, static_cast<size_t>(T), static_cast<size_t>(ld)).total;
            if (local.size() < need) local.resize(need);
            out = local.data();
        }
        const double t0 = MPI_Wtime();
        if (n > 0) work.play(T, out, ld, col0);
        const double t1 = MPI_Wtime();
        gather_rows(rank, size, out, it->second, cnt, MPI_COMM_WORLD);
        const double t2 = MPI_Wtime();
        // For the record of where the time goes: the slowest rank's rollout (one double each;
        // the gather above already waited for every rank, so this costs a latency, ~1 us).
        double mine_s = t1 - t0, slowest_s = 0;
        MPI_Reduce(&mine_s, &slowest_s, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0 && !reply(fd, 0, t1 - t0, t2 - t1, MPI_Wtime() - t_start, "", slowest_s))
            die("the Python side is gone");
    }
    for (auto& kv : types) kv.second.free();
    if (fd >= 0) ::close(fd);
    return 0;
}

// A rank program's main with nothing of its own: MPI up, the job, MPI down.
template <class Work>
int run(int argc, char** argv, const char* name) {
    g_name = name;
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const Args a = parse_args(argc, argv, [](const std::string&) { return false; });
    const int rc = serve<Work>(rank, size, a);
    MPI_Finalize();
    return rc;
}

}  // namespace mpi_job
