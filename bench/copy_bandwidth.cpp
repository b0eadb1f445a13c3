// bench_copy_bandwidth: the device-to-device copy bandwidth that `create --map --verify` is measured
// against. Copies SIZE bytes from one cuMemAlloc buffer to another with cuMemcpyDtoD on device 0's
// primary context, timed with events, and prints a small JSON document. Bandwidth counts bytes read
// plus bytes written (2 x SIZE) per second, as the verify pass counts its fill and check.
//
//   bench_copy_bandwidth SIZE_BYTES [REPS]
//
// Where two buffers of SIZE do not fit in free memory, SIZE is halved until they do, and the JSON
// says so ("size_bytes" against "requested_bytes").
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_driver.hpp"

namespace {

using bench::check;

// The entry points the copy needs, with the ABI versions cumemctl asks for.
struct Api : bench::ContextApi {
    PFN_cuMemAlloc_v3020 cuMemAlloc = nullptr;
    PFN_cuMemFree_v3020 cuMemFree = nullptr;
    PFN_cuMemsetD8_v3020 cuMemsetD8 = nullptr;
    PFN_cuMemcpyDtoD_v3020 cuMemcpyDtoD = nullptr;
    PFN_cuEventCreate_v2000 cuEventCreate = nullptr;
    PFN_cuEventRecord_v2000 cuEventRecord = nullptr;
    PFN_cuEventSynchronize_v2000 cuEventSynchronize = nullptr;
    PFN_cuEventElapsedTime_v2000 cuEventElapsedTime = nullptr;
    PFN_cuEventDestroy_v4000 cuEventDestroy = nullptr;
};

// dlopens the driver and resolves the table.
Api load_api() {
    const auto get_proc = bench::open_driver();
    Api a;
    bench::resolve_context(get_proc, a);
    bench::resolve(get_proc, "cuMemAlloc", 3020, a.cuMemAlloc);
    bench::resolve(get_proc, "cuMemFree", 3020, a.cuMemFree);
    bench::resolve(get_proc, "cuMemsetD8", 3020, a.cuMemsetD8);
    bench::resolve(get_proc, "cuMemcpyDtoD", 3020, a.cuMemcpyDtoD);
    bench::resolve(get_proc, "cuEventCreate", 2000, a.cuEventCreate);
    bench::resolve(get_proc, "cuEventRecord", 2000, a.cuEventRecord);
    bench::resolve(get_proc, "cuEventSynchronize", 2000, a.cuEventSynchronize);
    bench::resolve(get_proc, "cuEventElapsedTime", 2000, a.cuEventElapsedTime);
    bench::resolve(get_proc, "cuEventDestroy", 4000, a.cuEventDestroy);
    return a;
}

// The largest size not above `wanted`, halving, whose two buffers fit in free memory with a margin.
std::size_t fitting_size(const Api& a, std::size_t wanted) {
    size_t free = 0, total = 0;
    check(a.cuMemGetInfo(&free, &total), "cuMemGetInfo");
    const std::size_t margin = std::size_t{1} << 30;
    std::size_t size = wanted;
    while (size > (std::size_t{1} << 20) && 2 * size + margin > free) size /= 2;
    return size;
}

// Times `reps` copies of `size` bytes (after one warm-up), each between two events; seconds each.
std::vector<double> time_copies(const Api& a, CUdeviceptr dst, CUdeviceptr src, std::size_t size, int reps) {
    CUevent start = nullptr, end = nullptr;
    check(a.cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
    check(a.cuEventCreate(&end, CU_EVENT_DEFAULT), "cuEventCreate");
    std::vector<double> seconds;
    for (int i = -1; i < reps; ++i) {
        check(a.cuEventRecord(start, nullptr), "cuEventRecord");
        check(a.cuMemcpyDtoD(dst, src, size), "cuMemcpyDtoD");
        check(a.cuEventRecord(end, nullptr), "cuEventRecord");
        check(a.cuEventSynchronize(end), "cuEventSynchronize");
        float ms = 0;
        check(a.cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime");
        if (i >= 0) seconds.push_back(ms / 1e3);
    }
    a.cuEventDestroy(start);
    a.cuEventDestroy(end);
    return seconds;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_copy_bandwidth SIZE_BYTES [REPS]\n");
        return 2;
    }
    const std::size_t wanted = std::strtoull(argv[1], nullptr, 10);
    const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
    const Api a = load_api();
    check(a.cuInit(0), "cuInit");
    CUcontext ctx = nullptr;
    check(a.cuDevicePrimaryCtxRetain(&ctx, 0), "cuDevicePrimaryCtxRetain");
    check(a.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    const std::size_t size = fitting_size(a, wanted);
    CUdeviceptr src = 0, dst = 0;
    check(a.cuMemAlloc(&src, size), "cuMemAlloc");
    check(a.cuMemAlloc(&dst, size), "cuMemAlloc");
    check(a.cuMemsetD8(src, 0x5a, size), "cuMemsetD8");
    check(a.cuMemsetD8(dst, 0, size), "cuMemsetD8");
    std::vector<double> seconds = time_copies(a, dst, src, size, reps);
    a.cuMemFree(dst);
    a.cuMemFree(src);
    a.cuCtxSetCurrent(nullptr);
    a.cuDevicePrimaryCtxRelease(0);
    std::vector<double> sorted = seconds;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    auto gbps = [size](double s) { return s > 0 ? 2.0 * static_cast<double>(size) / s / 1e9 : 0.0; };
    std::printf("{\"requested_bytes\": %zu, \"size_bytes\": %zu, \"reps\": %d, \"seconds\": [", wanted, size, reps);
    for (std::size_t i = 0; i < seconds.size(); ++i) std::printf("%s%.9f", i ? ", " : "", seconds[i]);
    std::printf("], \"gbps_median\": %.3f, \"gbps_best\": %.3f}\n", gbps(median), gbps(sorted.front()));
    return 0;
}
