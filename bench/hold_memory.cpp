// bench_hold_memory: a neighbour process that holds all of a GPU's memory but a little, as a running job
// may, for doctor's busy-or-broken run on a real GPU (bench/doctor_busy.sh). It loads libcuda.so.1 itself;
// no cumemctl code.
//
//   bench_hold_memory [--device N] [--leave MiB]     (default device 0, leave 64 MiB)
//
// It makes a context on the device, allocates with cuMemAlloc until the driver's free memory is at most
// --leave MiB (big blocks first, then smaller), prints one JSON line {"pid", "device", "held_bytes",
// "free_bytes"} and "ready", and holds the memory until its stdin closes or it gets SIGTERM/SIGINT.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_driver.hpp"

namespace {

volatile std::sig_atomic_t stop = 0;

void on_signal(int) {
    stop = 1;
}

}  // namespace

int main(int argc, char** argv) {
    int device = 0;
    unsigned long long leave_mib = 64;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--device") == 0) device = std::atoi(argv[i + 1]);
        if (std::strcmp(argv[i], "--leave") == 0) leave_mib = std::strtoull(argv[i + 1], nullptr, 10);
    }
    const auto get_proc = bench::open_driver();
    PFN_cuInit_v2000 cu_init = nullptr;
    PFN_cuDevicePrimaryCtxRetain_v7000 retain = nullptr;
    PFN_cuCtxSetCurrent_v4000 set_current = nullptr;
    PFN_cuMemGetInfo_v3020 mem_info = nullptr;
    PFN_cuMemAlloc_v3020 mem_alloc = nullptr;
    bench::resolve(get_proc, "cuInit", 2000, cu_init);
    bench::resolve(get_proc, "cuDevicePrimaryCtxRetain", 7000, retain);
    bench::resolve(get_proc, "cuCtxSetCurrent", 4000, set_current);
    bench::resolve(get_proc, "cuMemGetInfo", 3020, mem_info);
    bench::resolve(get_proc, "cuMemAlloc", 3020, mem_alloc);
    bench::check(cu_init(0), "cuInit");
    CUcontext ctx = nullptr;
    bench::check(retain(&ctx, device), "cuDevicePrimaryCtxRetain");
    bench::check(set_current(ctx), "cuCtxSetCurrent");
    const unsigned long long leave = leave_mib << 20;
    unsigned long long held = 0;
    std::vector<CUdeviceptr> blocks;
    for (unsigned long long block = 1ULL << 30; block >= 2ULL << 20;) {
        size_t free = 0, total = 0;
        bench::check(mem_info(&free, &total), "cuMemGetInfo");
        if (free <= leave) break;
        const unsigned long long want = free - leave;
        const unsigned long long size = want < block ? (want >> 21) << 21 : block;
        if (size == 0) break;
        CUdeviceptr p = 0;
        if (mem_alloc(&p, size) != CUDA_SUCCESS) {
            block /= 2;
            continue;
        }
        blocks.push_back(p);
        held += size;
    }
    size_t free = 0, total = 0;
    bench::check(mem_info(&free, &total), "cuMemGetInfo");
    std::printf(
        "{\"pid\": %d, \"device\": %d, \"held_bytes\": %llu, \"free_bytes\": %zu, \"total_bytes\": %zu}\nready\n",
        static_cast<int>(getpid()), device, held, free, total);
    std::fflush(stdout);
    std::signal(SIGTERM, on_signal);
    std::signal(SIGINT, on_signal);
    char c = 0;
    while (stop == 0 && read(STDIN_FILENO, &c, 1) > 0) {
    }
    return 0;  // the driver gives the memory back as the process ends
}
