// bench_doctor_floor: the least a program can do for what `cumemctl doctor --quick` and `cumemctl doctor`
// must do on the GPUs, the floors that the benchmark (bench/run.sh, the doctor group) holds them against.
// It loads libcuda.so.1 and libnvidia-ml.so.1 itself; no cumemctl code.
//
//   bench_doctor_floor quick   cuInit, every device's identity and capability attributes (as the
//                              capabilities check asks them), and NVML's memory figures and health per
//                              device (as memory-health asks them); no context
//   bench_doctor_floor full    cuInit, one primary context per GPU made and released (one thread per GPU),
//                              and per GPU one second process that initialises the driver and makes its
//                              context (CUDA_VISIBLE_DEVICES set to the GPU), started at the beginning
//
// CUMEMCTL_LIBCUDA and CUMEMCTL_LIBNVML name other libraries (the fakes, for the runner's --smoke mode).
#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
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
    }
    if (shutdown != nullptr) shutdown();
    return sum;
}

// quick: no context. NVML on its own thread while the driver initialises, as doctor loads it.
int run_quick() {
    long long nvml_sum = 0;
    std::thread nvml([&nvml_sum] { nvml_sum = query_nvml(); });
    const Api a = load_api();
    const int count = init(a);
    long long sum = 0;
    for (int i = 0; i < count; ++i) sum += query_device(a, i);
    nvml.join();
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

// The second process: cuInit and its one device's context.
int run_child() {
    const Api a = load_api();
    if (init(a) < 1) return 1;
    context_on(a, 0);
    return 0;
}

// full: a second process per GPU started first (its start-up overlaps this one's), cuInit, one context per
// GPU on its own thread, then the second processes waited for.
int run_full(const char* self) {
    const Api a = load_api();
    const int count = init(a);
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
    std::vector<std::thread> threads;
    for (int i = 0; i < count; ++i) threads.emplace_back([&a, i] { context_on(a, i); });
    for (auto& t : threads) t.join();
    int failed = 0;
    for (pid_t pid : children) {
        int status = 0;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    }
    std::printf("{\"floor\": \"doctor-full\", \"device_count\": %d, \"second_processes\": %zu, \"failed\": %d}\n",
                count, children.size(), failed);
    return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string what = argc > 1 ? argv[1] : "";
    if (what == "quick") return run_quick();
    if (what == "full") return run_full("/proc/self/exe");
    if (what == "child") return run_child();
    std::fprintf(stderr, "usage: bench_doctor_floor quick | full\n");
    return 2;
}
