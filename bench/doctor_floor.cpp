// bench_doctor_floor: the least a program can do for what `cumemctl doctor --quick` and `cumemctl doctor`
// must do on the GPUs, the floors that the benchmark (bench/run.sh, the doctor group) holds them against.
// It loads libcuda.so.1 and libnvidia-ml.so.1 itself; no cumemctl code.
//
//   bench_doctor_floor quick   cuInit, every device's identity and capability attributes (as the
//                              capabilities check asks them), and NVML's memory figures and health per
//                              device (as memory-health asks them); no context
//   bench_doctor_floor quick   ... and NVML's PCIe link and NVLink queries per device (pcie-link read idle,
//                              nvlink), as the quick doctor's link checks ask them
//   bench_doctor_floor full    cuInit, one primary context per GPU made and released (one thread per GPU),
//                              and per GPU one second process that initialises the driver and makes its
//                              context (CUDA_VISIBLE_DEVICES set to the GPU), started at the beginning; and
//                              the link checks' copies, one GPU at a time as doctor makes them: the PCIe link
//                              read under two batches of 8 MiB host->device copies (pcie-link), 32 MiB each
//                              way from pinned memory, one untimed and four timed (host-bandwidth), and
//                              128 MiB device->device, one untimed and four timed (memory-bandwidth)
//
// CUMEMCTL_LIBCUDA and CUMEMCTL_LIBNVML name other libraries (the fakes, for the runner's --smoke mode).
#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench_driver.hpp"

extern char** environ;

namespace {

using bench::check;

struct Api {
    PFN_cuInit_v2000 cuInit = nullptr;
    PFN_cuDeviceGetCount_v2000 cuDeviceGetCount = nullptr;
    PFN_cuDeviceGetName_v2000 cuDeviceGetName = nullptr;
    PFN_cuDeviceGetAttribute_v2000 cuDeviceGetAttribute = nullptr;
    PFN_cuDeviceTotalMem_v3020 cuDeviceTotalMem = nullptr;
    PFN_cuDeviceGetUuid_v11040 cuDeviceGetUuid = nullptr;
    PFN_cuDeviceGetPCIBusId_v4010 cuDeviceGetPCIBusId = nullptr;
    PFN_cuDevicePrimaryCtxRetain_v7000 cuDevicePrimaryCtxRetain = nullptr;
    PFN_cuDevicePrimaryCtxRelease_v11000 cuDevicePrimaryCtxRelease = nullptr;
    PFN_cuCtxSetCurrent_v4000 cuCtxSetCurrent = nullptr;
    PFN_cuMemAlloc_v3020 cuMemAlloc = nullptr;
    PFN_cuMemFree_v3020 cuMemFree = nullptr;
    PFN_cuMemsetD8_v3020 cuMemsetD8 = nullptr;
    PFN_cuMemHostAlloc_v2020 cuMemHostAlloc = nullptr;
    PFN_cuMemFreeHost_v2000 cuMemFreeHost = nullptr;
    PFN_cuMemcpyHtoDAsync_v3020 cuMemcpyHtoDAsync = nullptr;
    PFN_cuMemcpyDtoHAsync_v3020 cuMemcpyDtoHAsync = nullptr;
    PFN_cuMemcpyDtoDAsync_v3020 cuMemcpyDtoDAsync = nullptr;
    PFN_cuStreamCreate_v2000 cuStreamCreate = nullptr;
    PFN_cuStreamSynchronize_v2000 cuStreamSynchronize = nullptr;
    PFN_cuStreamDestroy_v4000 cuStreamDestroy = nullptr;
};

Api load_api() {
    const auto get_proc = bench::open_driver();
    Api a;
    bench::resolve(get_proc, "cuInit", 2000, a.cuInit);
    bench::resolve(get_proc, "cuDeviceGetCount", 2000, a.cuDeviceGetCount);
    bench::resolve(get_proc, "cuDeviceGetName", 2000, a.cuDeviceGetName);
    bench::resolve(get_proc, "cuDeviceGetAttribute", 2000, a.cuDeviceGetAttribute);
    bench::resolve(get_proc, "cuDeviceTotalMem", 3020, a.cuDeviceTotalMem);
    bench::resolve(get_proc, "cuDeviceGetUuid", 11040, a.cuDeviceGetUuid);
    bench::resolve(get_proc, "cuDeviceGetPCIBusId", 4010, a.cuDeviceGetPCIBusId);
    bench::resolve(get_proc, "cuDevicePrimaryCtxRetain", 7000, a.cuDevicePrimaryCtxRetain);
    bench::resolve(get_proc, "cuDevicePrimaryCtxRelease", 11000, a.cuDevicePrimaryCtxRelease);
    bench::resolve(get_proc, "cuCtxSetCurrent", 4000, a.cuCtxSetCurrent);
    bench::resolve(get_proc, "cuMemAlloc", 3020, a.cuMemAlloc);
    bench::resolve(get_proc, "cuMemFree", 3020, a.cuMemFree);
    bench::resolve(get_proc, "cuMemsetD8", 3020, a.cuMemsetD8);
    bench::resolve(get_proc, "cuMemHostAlloc", 2020, a.cuMemHostAlloc);
    bench::resolve(get_proc, "cuMemFreeHost", 2000, a.cuMemFreeHost);
    bench::resolve(get_proc, "cuMemcpyHtoDAsync", 3020, a.cuMemcpyHtoDAsync);
    bench::resolve(get_proc, "cuMemcpyDtoHAsync", 3020, a.cuMemcpyDtoHAsync);
    bench::resolve(get_proc, "cuMemcpyDtoDAsync", 3020, a.cuMemcpyDtoDAsync);
    bench::resolve(get_proc, "cuStreamCreate", 2000, a.cuStreamCreate);
    bench::resolve(get_proc, "cuStreamSynchronize", 2000, a.cuStreamSynchronize);
    bench::resolve(get_proc, "cuStreamDestroy", 4000, a.cuStreamDestroy);
    return a;
}

int init(const Api& a) {
    check(a.cuInit(0), "cuInit");
    int count = 0;
    check(a.cuDeviceGetCount(&count), "cuDeviceGetCount");
    return count;
}

// One device's identity and attributes; returns a checksum so that nothing is optimised away.
long long query_device(const Api& a, int ordinal) {
    char name[256] = {};
    check(a.cuDeviceGetName(name, sizeof name, ordinal), "cuDeviceGetName");
    CUuuid uuid{};
    a.cuDeviceGetUuid(&uuid, ordinal);
    char bus[32] = {};
    a.cuDeviceGetPCIBusId(bus, sizeof bus, ordinal);
    size_t total = 0;
    check(a.cuDeviceTotalMem(&total, ordinal), "cuDeviceTotalMem");
    long long sum = static_cast<long long>(total % 1000) + name[0] + bus[0];
    // The compute capability, then the capability catalogue (as bench_floor asks it).
    int major = 0, minor = 0;
    a.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, ordinal);
    a.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, ordinal);
    sum += major + minor;
    for (int attribute : bench::kCapabilityAttributes) {
        int value = 0;
        if (a.cuDeviceGetAttribute(&value, static_cast<CUdevice_attribute>(attribute), ordinal) == CUDA_SUCCESS) {
            sum += value;
        }
    }
    return sum;
}

// NVML, declared here (no nvml.h is installed where this builds): the calls memory-health makes.
using NvmlDevice = void*;
struct NvmlMemoryV2 {
    unsigned int version;
    unsigned long long total, reserved, free, used;
};
struct NvmlBar1 {
    unsigned long long total, free, used;
};

// nvmlFieldValue_t (nvml.h), for the NVLink fields the nvlink check reads.
struct NvmlFieldValue {
    unsigned int fieldId, scopeId;
    long long timestamp, latencyUsec;
    int valueType, nvmlReturn;
    unsigned long long value;
};

// The nvlink check's questions for one device: the link count, then each link's state and speed.
long long nvlink_links(int (*fields)(NvmlDevice, int, NvmlFieldValue*), NvmlDevice d) {
    NvmlFieldValue count{};
    count.fieldId = 91;  // NVML_FI_DEV_NVLINK_LINK_COUNT
    if (fields(d, 1, &count) != 0 || count.nvmlReturn != 0) return 0;
    const unsigned links = static_cast<unsigned>(count.value & 0xffffffffU);
    long long up = 0;
    for (unsigned link = 0; link < links && link < 64; ++link) {
        NvmlFieldValue v[2]{};
        v[0].fieldId = 165, v[0].scopeId = link;  // NVML_FI_DEV_NVLINK_GET_STATE
        v[1].fieldId = 164, v[1].scopeId = link;  // NVML_FI_DEV_NVLINK_GET_SPEED
        if (fields(d, 2, v) == 0 && v[0].nvmlReturn == 0) up += static_cast<long long>(v[0].value & 1U);
    }
    return up;
}

template <typename Fn>
Fn nvml_symbol(void* lib, const char* name) {
    return reinterpret_cast<Fn>(dlsym(lib, name));
}

// NVML's figures and health for every device it lists: what memory-health asks, in the same order.
long long query_nvml() {
    const char* env = std::getenv("CUMEMCTL_LIBNVML");
    void* lib = dlopen(env != nullptr && *env != '\0' ? env : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return -1;
    auto init = nvml_symbol<int (*)()>(lib, "nvmlInit_v2");
    auto shutdown = nvml_symbol<int (*)()>(lib, "nvmlShutdown");
    auto count_fn = nvml_symbol<int (*)(unsigned*)>(lib, "nvmlDeviceGetCount_v2");
    auto handle_fn = nvml_symbol<int (*)(unsigned, NvmlDevice*)>(lib, "nvmlDeviceGetHandleByIndex_v2");
    auto uuid_fn = nvml_symbol<int (*)(NvmlDevice, char*, unsigned)>(lib, "nvmlDeviceGetUUID");
    auto memory = nvml_symbol<int (*)(NvmlDevice, NvmlMemoryV2*)>(lib, "nvmlDeviceGetMemoryInfo_v2");
    auto bar1 = nvml_symbol<int (*)(NvmlDevice, NvmlBar1*)>(lib, "nvmlDeviceGetBAR1MemoryInfo");
    auto ecc_mode = nvml_symbol<int (*)(NvmlDevice, int*, int*)>(lib, "nvmlDeviceGetEccMode");
    auto ecc_errors =
        nvml_symbol<int (*)(NvmlDevice, int, int, unsigned long long*)>(lib, "nvmlDeviceGetTotalEccErrors");
    auto rows =
        nvml_symbol<int (*)(NvmlDevice, unsigned*, unsigned*, unsigned*, unsigned*)>(lib, "nvmlDeviceGetRemappedRows");
    auto persistence = nvml_symbol<int (*)(NvmlDevice, int*)>(lib, "nvmlDeviceGetPersistenceMode");
    auto mig = nvml_symbol<int (*)(NvmlDevice, unsigned*, unsigned*)>(lib, "nvmlDeviceGetMigMode");
    auto link_fields = nvml_symbol<int (*)(NvmlDevice, int, NvmlFieldValue*)>(lib, "nvmlDeviceGetFieldValues");
    using UnsignedQuery = int (*)(NvmlDevice, unsigned*);
    const UnsignedQuery pcie[] = {
        nvml_symbol<UnsignedQuery>(lib, "nvmlDeviceGetCurrPcieLinkGeneration"),
        nvml_symbol<UnsignedQuery>(lib, "nvmlDeviceGetCurrPcieLinkWidth"),
        nvml_symbol<UnsignedQuery>(lib, "nvmlDeviceGetMaxPcieLinkGeneration"),
        nvml_symbol<UnsignedQuery>(lib, "nvmlDeviceGetMaxPcieLinkWidth"),
        nvml_symbol<UnsignedQuery>(lib, "nvmlDeviceGetGpuMaxPcieLinkGeneration"),
        nvml_symbol<UnsignedQuery>(lib, "nvmlDeviceGetPcieReplayCounter"),
        nvml_symbol<UnsignedQuery>(lib, "nvmlDeviceGetMemoryBusWidth"),
    };
    if (init == nullptr || count_fn == nullptr || handle_fn == nullptr || init() != 0) return -1;
    unsigned count = 0;
    count_fn(&count);
    long long sum = 0;
    for (unsigned i = 0; i < count; ++i) {
        NvmlDevice d = nullptr;
        if (handle_fn(i, &d) != 0) continue;
        char uuid[96] = {};
        if (uuid_fn != nullptr) uuid_fn(d, uuid, sizeof uuid);
        NvmlMemoryV2 m{};
        m.version = static_cast<unsigned>(sizeof m) | (2U << 24);
        if (memory != nullptr && memory(d, &m) == 0) sum += static_cast<long long>(m.free % 1000);
        NvmlBar1 b{};
        if (bar1 != nullptr) bar1(d, &b);
        int current = 0, pending = 0;
        if (ecc_mode != nullptr && ecc_mode(d, &current, &pending) == 0 && current != 0 && ecc_errors != nullptr) {
            unsigned long long errors = 0;
            ecc_errors(d, 1, 0, &errors);
            ecc_errors(d, 1, 1, &errors);
        }
        unsigned c = 0, u = 0, p = 0, f = 0;
        if (rows != nullptr) rows(d, &c, &u, &p, &f);
        int mode = 0;
        if (persistence != nullptr) persistence(d, &mode);
        unsigned mig_current = 0, mig_pending = 0;
        if (mig != nullptr) mig(d, &mig_current, &mig_pending);
        sum += uuid[4] + c + mode;
        for (const UnsignedQuery q : pcie) {
            unsigned v = 0;
            if (q != nullptr && q(d, &v) == 0) sum += v;
        }
        if (link_fields != nullptr) sum += nvlink_links(link_fields, d);
    }
    if (shutdown != nullptr) shutdown();
    bench::mark("NVML's questions (its own thread)");
    return sum;
}

// quick: no context. NVML on its own thread while the driver initialises, as doctor loads it.
int run_quick() {
    long long nvml_sum = 0;
    std::thread nvml([&nvml_sum] { nvml_sum = query_nvml(); });
    const Api a = load_api();
    bench::mark("dlopen libcuda, entry points");
    const int count = init(a);
    bench::mark("cuInit");
    long long sum = 0;
    for (int i = 0; i < count; ++i) sum += query_device(a, i);
    bench::mark("every device's attributes");
    nvml.join();
    bench::mark("NVML's thread joined");
    std::printf("{\"floor\": \"doctor-quick\", \"device_count\": %d, \"checksum\": %lld, \"nvml\": %s}\n", count, sum,
                nvml_sum < 0 ? "false" : "true");
    return 0;
}

// One context on `ordinal`, made and released.
void context_on(const Api& a, int ordinal) {
    CUcontext ctx = nullptr;
    check(a.cuDevicePrimaryCtxRetain(&ctx, ordinal), "cuDevicePrimaryCtxRetain");
    check(a.cuDevicePrimaryCtxRelease(ordinal), "cuDevicePrimaryCtxRelease");
}

// `n` copies by `copy` on `stream`, then waited for.
template <typename Copy>
void copies(const Api& a, CUstream stream, int n, Copy copy) {
    for (int i = 0; i < n; ++i) copy();
    check(a.cuStreamSynchronize(stream), "cuStreamSynchronize");
}

// The link checks' copies on the current context's device (as pcie-link, host-bandwidth and
// memory-bandwidth make them): device memory written before it is read, pinned host memory.
void link_copies(const Api& a) {
    constexpr size_t kLoad = 8ULL << 20, kHost = 32ULL << 20, kDevice = 128ULL << 20;
    constexpr int kBatch = 15;  // 2 ms at Gen5 x16, as pcie-link's batches
    CUstream s = nullptr;
    check(a.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    for (const size_t n : {kLoad, kHost}) {
        CUdeviceptr dev = 0;
        void* host = nullptr;
        check(a.cuMemAlloc(&dev, n), "cuMemAlloc");
        check(a.cuMemsetD8(dev, 0x5a, n), "cuMemsetD8");
        check(a.cuMemHostAlloc(&host, n, 0), "cuMemHostAlloc");
        const auto h2d = [&] { check(a.cuMemcpyHtoDAsync(dev, host, n, s), "cuMemcpyHtoDAsync"); };
        const auto d2h = [&] { check(a.cuMemcpyDtoHAsync(host, dev, n, s), "cuMemcpyDtoHAsync"); };
        if (n == kLoad) {
            copies(a, s, 2 * kBatch, h2d);
        } else {
            copies(a, s, 1, h2d), copies(a, s, 4, h2d), copies(a, s, 1, d2h), copies(a, s, 4, d2h);
        }
        check(a.cuMemFreeHost(host), "cuMemFreeHost");
        check(a.cuMemFree(dev), "cuMemFree");
        bench::mark(n == kLoad ? "pcie-link's copies" : "host-bandwidth's copies");
    }
    CUdeviceptr src = 0, dst = 0;
    check(a.cuMemAlloc(&src, kDevice), "cuMemAlloc");
    check(a.cuMemAlloc(&dst, kDevice), "cuMemAlloc");
    check(a.cuMemsetD8(src, 0x5a, kDevice), "cuMemsetD8");
    const auto d2d = [&] { check(a.cuMemcpyDtoDAsync(dst, src, kDevice, s), "cuMemcpyDtoDAsync"); };
    copies(a, s, 1, d2d), copies(a, s, 4, d2d);
    check(a.cuMemFree(src), "cuMemFree");
    check(a.cuMemFree(dst), "cuMemFree");
    check(a.cuStreamDestroy(s), "cuStreamDestroy");
    bench::mark("memory-bandwidth's copies");
}

// A context on `ordinal` with the link checks' copies in it, one GPU's copies at a time (doctor holds
// one lock around each GPU's copies, so that GPUs behind one switch do not share it), then released.
void context_with_copies(const Api& a, int ordinal, std::mutex& one_at_a_time) {
    CUcontext ctx = nullptr;
    check(a.cuDevicePrimaryCtxRetain(&ctx, ordinal), "cuDevicePrimaryCtxRetain");
    check(a.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    bench::mark("a device's context");
    {
        const std::lock_guard<std::mutex> lock(one_at_a_time);
        link_copies(a);
    }
    check(a.cuCtxSetCurrent(nullptr), "cuCtxSetCurrent");
    check(a.cuDevicePrimaryCtxRelease(ordinal), "cuDevicePrimaryCtxRelease");
    bench::mark("a device's context released");
}

// The second process: cuInit and its one device's context.
int run_child() {
    const Api a = load_api();
    bench::mark("second process: dlopen libcuda, entry points");
    if (init(a) < 1) return 1;
    bench::mark("second process: cuInit");
    context_on(a, 0);
    bench::mark("second process: context made and released");
    return 0;
}

// full: a second process per GPU started first (its start-up overlaps this one's), cuInit, one context per
// GPU on its own thread, then the second processes waited for.
int run_full(const char* self) {
    const Api a = load_api();
    bench::mark("dlopen libcuda, entry points");
    const int count = init(a);
    bench::mark("cuInit");
    std::vector<pid_t> children;
    for (int i = 0; i < count; ++i) {
        std::vector<std::string> env_text;
        for (char** e = environ; *e != nullptr; ++e) {
            if (std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0) env_text.emplace_back(*e);
        }
        env_text.push_back("CUDA_VISIBLE_DEVICES=" + std::to_string(i));
        std::vector<char*> env;
        for (auto& t : env_text) env.push_back(t.data());
        env.push_back(nullptr);
        char child_arg[] = "child";
        char* argv[] = {const_cast<char*>(self), child_arg, nullptr};
        pid_t pid = 0;
        if (posix_spawn(&pid, self, nullptr, nullptr, argv, env.data()) != 0) bench::fail("posix_spawn", -1);
        children.push_back(pid);
    }
    bench::mark("second processes started");
    long long nvml_sum = 0;
    std::thread nvml([&nvml_sum] { nvml_sum = query_nvml(); });
    std::mutex one_at_a_time;
    std::vector<std::thread> threads;
    for (int i = 0; i < count; ++i)
        threads.emplace_back([&a, i, &one_at_a_time] { context_with_copies(a, i, one_at_a_time); });
    for (auto& t : threads) t.join();
    nvml.join();
    bench::mark("every device's thread and NVML's joined");
    int failed = 0;
    for (pid_t pid : children) {
        int status = 0;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    }
    bench::mark("second processes ended");
    std::printf(
        "{\"floor\": \"doctor-full\", \"device_count\": %d, \"second_processes\": %zu, \"failed\": %d, "
        "\"nvml\": %s}\n",
        count, children.size(), failed, nvml_sum < 0 ? "false" : "true");
    return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    bench::mark("main (after the loader)");
    const std::string what = argc > 1 ? argv[1] : "";
    if (what == "quick") return run_quick();
    if (what == "full") return run_full("/proc/self/exe");
    if (what == "child") return run_child();
    std::fprintf(stderr, "usage: bench_doctor_floor quick | full\n");
    return 2;
}
