// bench_contexts: what the driver costs a process that starts, initialises and makes a context on each
// visible device, with the time of each step on the machine's monotonic clock (so that processes
// started side by side can be compared: which steps of theirs overlap, which wait for each other).
// No cumemctl code; bench/contexts.py runs it in the arrangements doctor could use.
//
//   bench_contexts steps [--threads|--no-release]
//                                       cuInit, then a primary context and cuMemGetInfo per device
//                                       (one thread per device with --threads); the contexts are
//                                       released before exit, except with --no-release (the exit
//                                       then ends them)
//   bench_contexts no-context           which virtual-memory and pool calls work after cuInit with no
//                                       context current (result codes), on device 0
//
// Prints one JSON object. CUMEMCTL_LIBCUDA names another library (the fake driver).
#include <time.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench_driver.hpp"

namespace {

using bench::check;

double now_ms() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct Api : bench::ContextApi, bench::VmmApi {};

Api load_api() {
    const auto get_proc = bench::open_driver();
    Api a;
    bench::resolve_context(get_proc, a);
    bench::resolve_vmm(get_proc, a);
    return a;
}

// One device's context step: retain the primary context, make it current, read free memory.
struct DeviceSteps {
    double retain_start = 0, retain_end = 0, meminfo_end = 0;
};

DeviceSteps context_steps(const Api& a, int ordinal) {
    DeviceSteps s;
    CUcontext ctx = nullptr;
    s.retain_start = now_ms();
    check(a.cuDevicePrimaryCtxRetain(&ctx, ordinal), "cuDevicePrimaryCtxRetain");
    s.retain_end = now_ms();
    check(a.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    size_t free = 0, total = 0;
    check(a.cuMemGetInfo(&free, &total), "cuMemGetInfo");
    s.meminfo_end = now_ms();
    return s;
}

int run_steps(double start, bool threads, bool release) {
    const Api a = load_api();
    const double loaded = now_ms();
    check(a.cuInit(0), "cuInit");
    const double inited = now_ms();
    int count = 0;
    check(a.cuDeviceGetCount(&count), "cuDeviceGetCount");
    std::vector<DeviceSteps> steps(static_cast<std::size_t>(count));
    if (threads && count > 1) {
        std::vector<std::thread> pool;
        for (int i = 0; i < count; ++i) pool.emplace_back([&, i] { steps[i] = context_steps(a, i); });
        for (auto& t : pool) t.join();
    } else {
        for (int i = 0; i < count; ++i) steps[i] = context_steps(a, i);
    }
    const double done = now_ms();
    std::printf("{\"start\": %.3f, \"loaded\": %.3f, \"init_end\": %.3f, \"done\": %.3f, \"devices\": [", start, loaded,
                inited, done);
    for (int i = 0; i < count; ++i) {
        std::printf("%s{\"retain_start\": %.3f, \"retain_end\": %.3f, \"meminfo_end\": %.3f}", i ? ", " : "",
                    steps[i].retain_start, steps[i].retain_end, steps[i].meminfo_end);
    }
    std::printf("]}\n");
    std::fflush(stdout);
    if (release) {
        for (int i = 0; i < count; ++i) a.cuDevicePrimaryCtxRelease(i);
    }
    return 0;
}

// Which calls answer with no context current: each result code by name of the call.
int run_no_context() {
    const Api a = load_api();
    check(a.cuInit(0), "cuInit");
    std::vector<std::pair<const char*, int>> results;
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    size_t g = 0;
    CUresult r = a.cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    results.emplace_back("cuMemGetAllocationGranularity", r);
    if (g == 0) g = 2u << 20;
    CUmemGenericAllocationHandle h = 0;
    r = a.cuMemCreate(&h, g, &prop, 0);
    results.emplace_back("cuMemCreate", r);
    int fd = -1;
    if (r == CUDA_SUCCESS) {
        results.emplace_back("cuMemExportToShareableHandle",
                             a.cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    }
    CUmemGenericAllocationHandle imported = 0;
    if (fd >= 0) {
        results.emplace_back("cuMemImportFromShareableHandle",
                             a.cuMemImportFromShareableHandle(&imported, reinterpret_cast<void*>(static_cast<long>(fd)),
                                                              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    }
    CUdeviceptr va = 0;
    r = a.cuMemAddressReserve(&va, g, 0, 0, 0);
    results.emplace_back("cuMemAddressReserve", r);
    bool mapped = false;
    if (r == CUDA_SUCCESS && h != 0) {
        r = a.cuMemMap(va, g, 0, imported != 0 ? imported : h, 0);
        results.emplace_back("cuMemMap", r);
        mapped = r == CUDA_SUCCESS;
        if (mapped) {
            CUmemAccessDesc access{};
            access.location = prop.location;
            access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
            results.emplace_back("cuMemSetAccess", a.cuMemSetAccess(va, g, &access, 1));
        }
    }
    CUmemPoolProps pool_props{};
    pool_props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    pool_props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    pool_props.location = prop.location;
    CUmemoryPool pool = nullptr;
    r = a.cuMemPoolCreate(&pool, &pool_props);
    results.emplace_back("cuMemPoolCreate", r);
    if (r == CUDA_SUCCESS) {
        int pool_fd = -1;
        results.emplace_back(
            "cuMemPoolExportToShareableHandle",
            a.cuMemPoolExportToShareableHandle(&pool_fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
        a.cuMemPoolDestroy(pool);
    }
    if (mapped) a.cuMemUnmap(va, g);
    if (va != 0) a.cuMemAddressFree(va, g);
    if (imported != 0) a.cuMemRelease(imported);
    if (h != 0) a.cuMemRelease(h);
    std::printf("{");
    for (std::size_t i = 0; i < results.size(); ++i) {
        std::printf("%s\"%s\": %d", i ? ", " : "", results[i].first, results[i].second);
    }
    std::printf("}\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const double start = now_ms();
    const std::string what = argc > 1 ? argv[1] : "";
    const std::string option = argc > 2 ? argv[2] : "";
    if (what == "steps") return run_steps(start, option == "--threads", option != "--no-release");
    if (what == "no-context") return run_no_context();
    std::fprintf(stderr, "usage: bench_contexts steps [--threads|--no-release] | bench_contexts no-context\n");
    return 2;
}
