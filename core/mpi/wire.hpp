// The MPI job of every workload: the socket between the Python process and rank 0, and the
// order rank 0 broadcasts. The wire format must match protocol.py (CMD, REPLY); serve.hpp
// speaks it.
#pragma once
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace mpi_job {

// ---- wire format: must match protocol.py (CMD, REPLY) ----------------------------------
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

// ---- socket helpers (rank 0) -----------------------------------------------------------
inline bool read_all(int fd, void* buf, size_t n) {
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

inline bool write_all(int fd, const void* buf, size_t n) {
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

inline bool reply(int fd, uint32_t status, double r_s, double g_s, double tot_s, const std::string& payload,
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

}  // namespace mpi_job
