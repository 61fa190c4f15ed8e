// v6: one MPI rank of the rollout job. Started by mpirun from versions/cartpole/v6_mpi/launcher.py.
//
// Rank r owns the contiguous environments [lo_r, hi_r) of the batch and steps them with
// the shared rollout of native/include/rollout.hpp (the same function v4 and v5 call).
// Rank 0 is the learner's side: it reads commands from the Python process over a Unix
// socket, broadcasts them (and new weights and epsilon) to the other ranks, and receives
// their blocks straight into the time-major [T, N, ...] arrays, which live in shared
// memory that the Python process reads as NumPy arrays.
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
// benchmark: it moves the same bytes in 16/8/1-byte pieces and measured 3-16x slower.
// Rank 0's own block is written in place. reward is 1.0 everywhere and is filled on
// rank 0, not sent.
//
// With --bench-gather the program instead measures MPI_Gatherv of contiguous bytes and
// both batch gathers and prints JSON lines on rank 0's stdout (harness/cmd_mpi.py).
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
#include <cerrno>
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

namespace {

// ---- wire format: must match launcher.py (CMD, REPLY) --------------------------------
#pragma pack(push, 1)
struct Cmd {            // 64 bytes
    char magic[4];      // "V6MC"
    uint32_t cmd;       // 1 GENERATE, 2 MAP, 3 QUIT, 4 CALIBRATE
    uint32_t T;
    uint32_t H;
    double epsilon;
    uint64_t payload;   // bytes following the header
    char pad[32];
};
struct Reply {          // 64 bytes
    char magic[4];      // "V6MR"
    uint32_t status;    // 0 ok
    uint32_t T;
    uint32_t zero;
    double rollout_s, gather_s, total_s;
    uint64_t payload;
    double slowest_rollout_s;   // the longest rollout of any rank in this call
    char pad[8];
};
#pragma pack(pop)
static_assert(sizeof(Cmd) == 64 && sizeof(Reply) == 64, "wire headers are 64 bytes");
enum : uint32_t { C_GENERATE = 1, C_MAP = 2, C_QUIT = 3, C_CALIBRATE = 4 };

// What rank 0 broadcasts before each call.
struct Order {
    int32_t cmd, T, H, has_weights;
    double epsilon;
};

// ---- the batch layout in one buffer (launcher.layout) ----------------------------------
constexpr size_t ALIGN = 64;
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
        Layout L(T, std::max<int64_t>(ld, 1));
        f16 = env_columns(T, ld, MPI_FLOAT, 4, 4, static_cast<MPI_Aint>(L.next_obs - L.obs));
        i8 = env_columns(T, ld, MPI_INT64_T, 1, 8, -1);
        b1 = env_columns(T, ld, MPI_BYTE, 1, 1, static_cast<MPI_Aint>(L.truncated - L.terminated));
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
    Layout L(T, std::max<int64_t>(ld, 1));
    const int mine = counts[rank];
    struct Part { size_t off; MPI_Datatype s, r; };
    const Part parts[3] = {{L.obs, send.f16, recv.f16}, {L.action, send.i8, recv.i8},
                           {L.terminated, send.b1, recv.b1}};
    for (const Part& p : parts) {
        if (rank == 0)
            MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out + p.off, counts.data(), displs.data(),
                        p.r, 0, comm);
        else
            MPI_Gatherv(out + p.off, mine, p.s, nullptr, nullptr, nullptr, MPI_DATATYPE_NULL, 0, comm);
    }
}

// ---- the gather v6 uses: row blocks, one collective --------------------------------------
// In a time-major array rank r's part of time row t is one contiguous run of n_r
// environments (n_r*16 bytes of obs, n_r*8 of action, ...). The receive datatype of rank r
// is, for each of the 5 arrays, an hvector of T such runs with the row stride of the whole
// batch, placed at that array's offset + lo_r; the 5 are bound into one struct, so the
// whole block of rank r lands in place in one go. The sender's datatype is its 5 local
// arrays (each contiguous) in the same order. Because every rank needs its own receive
// datatype (n_r and lo_r differ), the collective is MPI_Alltoallw used as a gather (only
// the counts towards rank 0 are non-zero): MPI_Gatherv takes a single receive datatype,
// which forces either equal slices or the 16-byte column pieces above (3-4x slower,
// measured by --bench-gather). reward is not sent: it is 1.0 everywhere.
struct ArrayPart { size_t Layout::*off; int width; };
const ArrayPart PARTS[5] = {{&Layout::obs, 16}, {&Layout::next_obs, 16}, {&Layout::action, 8},
                            {&Layout::terminated, 1}, {&Layout::truncated, 1}};

MPI_Datatype rows_type(int T, int64_t N, int64_t lo, int64_t n) {     // root: rank's block in [T, N]
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

MPI_Datatype local_type(int T, int64_t n) {                           // sender: its [T, n] arrays
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
void gather_rows(int rank, int size, char* out, const RowTypes& ty, const std::vector<int>& counts, MPI_Comm comm) {
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

// ---- socket helpers (rank 0) -----------------------------------------------------------
bool read_all(int fd, void* buf, size_t n) {
    char* p = static_cast<char*>(buf);
    while (n) {
        ssize_t k = ::read(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= static_cast<size_t>(k);
    }
    return true;
}

bool write_all(int fd, const void* buf, size_t n) {
    const char* p = static_cast<const char*>(buf);
    while (n) {
        ssize_t k = ::write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= static_cast<size_t>(k);
    }
    return true;
}

bool reply(int fd, uint32_t status, double r_s, double g_s, double tot_s, const std::string& payload,
           double slowest_s = 0) {
    Reply h{};
    h.slowest_rollout_s = slowest_s;
    std::memcpy(h.magic, "V6MR", 4);
    h.status = status;
    h.rollout_s = r_s;
    h.gather_s = g_s;
    h.total_s = tot_s;
    h.payload = payload.size();
    return write_all(fd, &h, sizeof h) && write_all(fd, payload.data(), payload.size());
}

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

// ---- --bench-gather ----------------------------------------------------------------------
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
    // 2. The batch's own gather (3 Gatherv with the column datatypes), T = 32, n envs a rank.
    const int T = 32;
    const int64_t max_n = quick ? 4096 : 16384;
    for (int64_t n = 1; n <= max_n; n *= 4) {
        const int64_t N = n * size;
        std::vector<int> counts(size, static_cast<int>(n)), displs(size);
        for (int r = 0; r < size; ++r) displs[r] = static_cast<int>(n * r);
        std::vector<char> mine(Layout(T, n).total, 1), all(rank == 0 ? Layout(T, N).total : 1, 0);
        char* out = rank == 0 ? all.data() : mine.data();
        // v6's gather (row blocks, one MPI_Alltoallw) and the rejected alternative (3
        // MPI_Gatherv with one-environment column datatypes, 16/8/1-byte pieces).
        RowTypes rows(rank, size, T, N, counts, displs);
        BatchTypes send(T, n), recv = rank == 0 ? BatchTypes(T, N) : BatchTypes();
        auto op_rows = [&] { gather_rows(rank, size, out, rows, counts, MPI_COMM_WORLD); };
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

}  // namespace

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
        rc = bench_gather(rank, size, quick);
    } else {
        if (!sock || N <= 0) { std::fprintf(stderr, "need --socket PATH --envs N\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
        rc = run_job(rank, size, sock, N, seed, egreedy);
    }
    MPI_Finalize();
    return rc;
}
