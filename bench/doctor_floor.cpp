// bench_doctor_floor: the least a program can do for what `cumemctl doctor --quick` and `cumemctl doctor`
// must do on the GPUs, the floors that the benchmark (bench/run.sh, the doctor group) holds them against.
// It loads libcuda.so.1 and libnvidia-ml.so.1 itself; no cumemctl code.
//
//   bench_doctor_floor quick   cuInit, every device's identity and capability attributes (as the
//                              capabilities check asks them), and NVML's memory figures and health per
//                              device (as memory-health asks them); no context
//   bench_doctor_floor quick   ... and NVML's PCIe link and NVLink queries per device (pcie-link read idle,
//                              nvlink), as the quick doctor's link checks ask them
//   bench_doctor_floor full    NVML's questions on a thread of their own and, per GPU the kernel lists
//                              (/proc/driver/nvidia/gpus, as doctor starts its importers), a second process
//                              (CUDA_VISIBLE_DEVICES set to the GPU) started first; cuInit; per GPU on a
//                              thread of its own a primary context in which the allocating checks' memory
//                              is made (a granule each, written and read back): cuMemCreate (vmm), one
//                              exported as a POSIX fd that the second process imports, maps and reads
//                              (posix-fd-ipc), the default pool's eight-granule workload trimmed
//                              (pool-trim), an IPC pool and a block of it imported and read there
//                              (ipc-pool), host and host-NUMA memory (host-alloc), a fabric handle where
//                              supported (fabric-alloc); then the link checks' copies, one GPU at a time as
//                              doctor makes them: the PCIe link read under two batches of 8 MiB
//                              host->device copies (pcie-link), 32 MiB each way from pinned memory, one
//                              untimed and four timed once the second process has released its context
//                              (host-bandwidth), and 128 MiB device->device, one
//                              untimed and four timed (memory-bandwidth); the context released, the second
//                              processes waited for
//
// CUMEMCTL_LIBCUDA and CUMEMCTL_LIBNVML name other libraries (the fakes, for the runner's --smoke mode).
#include <dirent.h>
#include <dlfcn.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench_driver.hpp"

extern char** environ;

namespace {

using bench::check;

struct Api : bench::ContextApi, bench::IdentityApi, bench::VmmApi {
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
    // The allocating checks' calls.
    PFN_cuMemcpyDtoH_v3020 cuMemcpyDtoH = nullptr;
    PFN_cuDeviceGetDefaultMemPool_v11020 cuDeviceGetDefaultMemPool = nullptr;
    PFN_cuMemAllocFromPoolAsync_v11020 cuMemAllocFromPoolAsync = nullptr;
    PFN_cuMemFreeAsync_v11020 cuMemFreeAsync = nullptr;
    PFN_cuMemPoolTrimTo_v11020 cuMemPoolTrimTo = nullptr;
    PFN_cuMemPoolGetAttribute_v11020 cuMemPoolGetAttribute = nullptr;
    PFN_cuMemPoolExportPointer_v11020 cuMemPoolExportPointer = nullptr;
    PFN_cuMemPoolImportFromShareableHandle_v11020 cuMemPoolImportFromShareableHandle = nullptr;
    PFN_cuMemPoolImportPointer_v11020 cuMemPoolImportPointer = nullptr;
    PFN_cuMemPoolSetAccess_v11020 cuMemPoolSetAccess = nullptr;
};

Api load_api() {
    const auto get_proc = bench::open_driver();
    Api a;
    bench::resolve_context(get_proc, a);
    bench::resolve_identity(get_proc, a);
    bench::resolve_vmm(get_proc, a);
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
    bench::resolve(get_proc, "cuMemcpyDtoH", 3020, a.cuMemcpyDtoH);
    bench::resolve(get_proc, "cuDeviceGetDefaultMemPool", 11020, a.cuDeviceGetDefaultMemPool);
    bench::resolve(get_proc, "cuMemAllocFromPoolAsync", 11020, a.cuMemAllocFromPoolAsync);
    bench::resolve(get_proc, "cuMemFreeAsync", 11020, a.cuMemFreeAsync);
    bench::resolve(get_proc, "cuMemPoolTrimTo", 11020, a.cuMemPoolTrimTo);
    bench::resolve(get_proc, "cuMemPoolGetAttribute", 11020, a.cuMemPoolGetAttribute);
    bench::resolve(get_proc, "cuMemPoolExportPointer", 11020, a.cuMemPoolExportPointer);
    bench::resolve(get_proc, "cuMemPoolImportFromShareableHandle", 11020, a.cuMemPoolImportFromShareableHandle);
    bench::resolve(get_proc, "cuMemPoolImportPointer", 11020, a.cuMemPoolImportPointer);
    bench::resolve(get_proc, "cuMemPoolSetAccess", 11020, a.cuMemPoolSetAccess);
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

// `n` copies by `copy` on `stream`, then waited for.
template <typename Copy>
void copies(const Api& a, CUstream stream, int n, Copy copy) {
    for (int i = 0; i < n; ++i) copy();
    check(a.cuStreamSynchronize(stream), "cuStreamSynchronize");
}

// Waits until the second process at `sock` (-1: none) has ended its side of the socket, which it does once
// it has released its context, and closes this side: doctor measures host copies with no teardown of its
// importer beside them.
void wait_second_released(int sock) {
    if (sock < 0) return;
    char byte = 0;
    while (read(sock, &byte, 1) > 0) {
    }
    close(sock);
    bench::mark("second process's context released");
}

// The link checks' copies on the current context's device (as pcie-link, host-bandwidth and
// memory-bandwidth make them): device memory written before it is read, pinned host memory; the host
// copies once the second process at `sock` has released its context.
void link_copies(const Api& a, int sock) {
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
        if (n == kHost) wait_second_released(sock);
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

// The allocating checks (vmm, posix-fd-ipc, pool-trim, ipc-pool, host-alloc, fabric-alloc), each at the
// smallest size the driver allows, as doctor makes them; what the second process imports crosses a Unix
// socket beside a message.
struct Message {
    int kind = 0;                   // 1: a cuMemCreate allocation's POSIX fd; 2: an IPC pool's fd and a block of it
    CUmemPoolPtrExportData data{};  // the block (kind 2)
};

void send_with_fd(int sock, const Message& m, int fd) {
    iovec io{const_cast<Message*>(&m), sizeof m};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &io, msg.msg_iovlen = 1, msg.msg_control = control, msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    if (sendmsg(sock, &msg, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof m)) bench::fail("sendmsg", -1);
}

// The next message and its descriptor; false once the other end has closed.
bool receive_with_fd(int sock, Message& m, int& fd) {
    iovec io{&m, sizeof m};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &io, msg.msg_iovlen = 1, msg.msg_control = control, msg.msg_controllen = sizeof control;
    const ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (n == 0) return false;
    const cmsghdr* c = CMSG_FIRSTHDR(&msg);
    if (n != static_cast<ssize_t>(sizeof m) || c == nullptr || c->cmsg_type != SCM_RIGHTS) bench::fail("recvmsg", -1);
    std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return true;
}

void answer(int sock) {
    const char ok = 1;
    if (write(sock, &ok, 1) != 1) bench::fail("write", -1);
}

void wait_answer(int sock) {
    char ok = 0;
    if (read(sock, &ok, 1) != 1 || ok != 1) bench::fail("the second process's answer", -1);
}

int attribute(const Api& a, CUdevice_attribute what, int ordinal) {
    int v = 0;
    return a.cuDeviceGetAttribute(&v, what, ordinal) == CUDA_SUCCESS ? v : 0;
}

CUmemAllocationProp memory_on(CUmemLocationType type, int id, CUmemAllocationHandleType handles) {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = type, prop.location.id = id;
    prop.requestedHandleTypes = handles;
    return prop;
}

// The smallest allocation of `prop` the driver allows.
size_t granule_of(const Api& a, const CUmemAllocationProp& prop) {
    size_t granule = 0;
    check(a.cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
          "cuMemGetAllocationGranularity");
    return granule;
}

// Writes the memory at `ptr` and reads its first bytes back.
void fill_and_check(const Api& a, CUdeviceptr ptr, size_t size) {
    check(a.cuMemsetD8(ptr, 0x5a, size), "cuMemsetD8");
    unsigned char back[256] = {};
    check(a.cuMemcpyDtoH(back, ptr, std::min(size, sizeof back)), "cuMemcpyDtoH");
    if (back[0] != 0x5a || back[sizeof back - 1] != 0x5a) bench::fail("the pattern", -1);
}

// Maps `handle` (`size` bytes) for `ordinal`, runs `use` on the address, then unmaps and frees it.
template <typename Use>
void mapped(const Api& a, CUmemGenericAllocationHandle handle, size_t size, int ordinal, Use use) {
    CUdeviceptr ptr = 0;
    check(a.cuMemAddressReserve(&ptr, size, 0, 0, 0), "cuMemAddressReserve");
    check(a.cuMemMap(ptr, size, 0, handle, 0), "cuMemMap");
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE, access.location.id = ordinal;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    check(a.cuMemSetAccess(ptr, size, &access, 1), "cuMemSetAccess");
    use(ptr);
    check(a.cuMemUnmap(ptr, size), "cuMemUnmap");
    check(a.cuMemAddressFree(ptr, size), "cuMemAddressFree");
}

// One granule of `prop` made, mapped, filled and checked; with `sock`, exported and imported by the
// second process, which checks it too; released.
void create_round(const Api& a, int ordinal, const CUmemAllocationProp& prop, int sock) {
    const size_t size = granule_of(a, prop);
    CUmemGenericAllocationHandle handle = 0;
    check(a.cuMemCreate(&handle, size, &prop, 0), "cuMemCreate");
    mapped(a, handle, size, ordinal, [&](CUdeviceptr ptr) {
        fill_and_check(a, ptr, size);
        if (sock < 0) return;
        int fd = -1;
        check(a.cuMemExportToShareableHandle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
              "cuMemExportToShareableHandle");
        send_with_fd(sock, Message{1, {}}, fd);
        close(fd);
        wait_answer(sock);
    });
    check(a.cuMemRelease(handle), "cuMemRelease");
}

// pool-trim's workload: eight granules from the device's default pool, freed, the pool trimmed.
void pool_trim(const Api& a, int ordinal, CUstream s) {
    CUmemoryPool pool = nullptr;
    check(a.cuDeviceGetDefaultMemPool(&pool, ordinal), "cuDeviceGetDefaultMemPool");
    const size_t granule = granule_of(a, memory_on(CU_MEM_LOCATION_TYPE_DEVICE, ordinal, CU_MEM_HANDLE_TYPE_NONE));
    CUdeviceptr blocks[8] = {};
    for (CUdeviceptr& b : blocks) check(a.cuMemAllocFromPoolAsync(&b, granule, pool, s), "cuMemAllocFromPoolAsync");
    for (CUdeviceptr b : blocks) check(a.cuMemFreeAsync(b, s), "cuMemFreeAsync");
    check(a.cuStreamSynchronize(s), "cuStreamSynchronize");
    check(a.cuMemPoolTrimTo(pool, 0), "cuMemPoolTrimTo");
    cuuint64_t reserved = 0;
    check(a.cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved), "cuMemPoolGetAttribute");
}

// ipc-pool: a pool that exports POSIX fds, a block of it written, both imported and checked by the second
// process; then freed and destroyed.
void ipc_pool(const Api& a, int ordinal, CUstream s, int sock) {
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE, props.location.id = ordinal;
    CUmemoryPool pool = nullptr;
    check(a.cuMemPoolCreate(&pool, &props), "cuMemPoolCreate");
    const size_t granule = granule_of(a, memory_on(CU_MEM_LOCATION_TYPE_DEVICE, ordinal, CU_MEM_HANDLE_TYPE_NONE));
    CUdeviceptr block = 0;
    check(a.cuMemAllocFromPoolAsync(&block, granule, pool, s), "cuMemAllocFromPoolAsync");
    check(a.cuStreamSynchronize(s), "cuStreamSynchronize");
    fill_and_check(a, block, granule);
    int fd = -1;
    check(a.cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
          "cuMemPoolExportToShareableHandle");
    Message m{2, {}};
    check(a.cuMemPoolExportPointer(&m.data, block), "cuMemPoolExportPointer");
    send_with_fd(sock, m, fd);
    close(fd);
    wait_answer(sock);
    check(a.cuMemFreeAsync(block, s), "cuMemFreeAsync");
    check(a.cuStreamSynchronize(s), "cuStreamSynchronize");
    check(a.cuMemPoolDestroy(pool), "cuMemPoolDestroy");
}

// Every allocating check doctor runs on the current context's device `ordinal` (those its attributes
// allow), with the second process at `sock` (-1: none) importing what posix-fd-ipc and ipc-pool export.
void allocating_checks(const Api& a, int ordinal, int sock) {
    CUstream s = nullptr;
    check(a.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    const bool vmm = attribute(a, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, ordinal) != 0;
    const bool posix_fd = attribute(a, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, ordinal) != 0;
    const bool pools = attribute(a, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, ordinal) != 0;
    const int pool_handles = attribute(a, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, ordinal);
    if (vmm) create_round(a, ordinal, memory_on(CU_MEM_LOCATION_TYPE_DEVICE, ordinal, CU_MEM_HANDLE_TYPE_NONE), -1);
    if (vmm && posix_fd && sock >= 0) {
        create_round(a, ordinal,
                     memory_on(CU_MEM_LOCATION_TYPE_DEVICE, ordinal, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), sock);
    }
    if (pools) pool_trim(a, ordinal, s);
    if (pools && (pool_handles & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0 && sock >= 0)
        ipc_pool(a, ordinal, s, sock);
    if (attribute(a, CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, ordinal) != 0)
        create_round(a, ordinal, memory_on(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_HANDLE_TYPE_NONE), -1);
    const int numa = attribute(a, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, ordinal);
    if (attribute(a, CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, ordinal) != 0 && numa >= 0)
        create_round(a, ordinal, memory_on(CU_MEM_LOCATION_TYPE_HOST_NUMA, numa, CU_MEM_HANDLE_TYPE_NONE), -1);
    if (attribute(a, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, ordinal) != 0) {
        // As fabric-alloc: made and exported where this process can open an IMEX channel, else refused.
        const CUmemAllocationProp prop = memory_on(CU_MEM_LOCATION_TYPE_DEVICE, ordinal, CU_MEM_HANDLE_TYPE_FABRIC);
        size_t granule = 0;
        CUmemGenericAllocationHandle handle = 0;
        if (a.cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS &&
            a.cuMemCreate(&handle, granule, &prop, 0) == CUDA_SUCCESS) {
            CUmemFabricHandle fabric{};
            (void)a.cuMemExportToShareableHandle(&fabric, handle, CU_MEM_HANDLE_TYPE_FABRIC, 0);
            check(a.cuMemRelease(handle), "cuMemRelease");
        }
    }
    check(a.cuStreamDestroy(s), "cuStreamDestroy");
    bench::mark("the allocating checks");
}

// The second process's part: imports what arrives on `sock`, maps it (an imported pool: access granted to
// its device), checks the pattern, frees the import and answers, until the floor closes the socket.
void serve_imports(const Api& a, int sock) {
    CUstream s = nullptr;
    check(a.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    Message m;
    int fd = -1;
    while (receive_with_fd(sock, m, fd)) {
        if (m.kind == 1) {
            CUmemGenericAllocationHandle handle = 0;
            check(a.cuMemImportFromShareableHandle(&handle, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                                   CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
                  "cuMemImportFromShareableHandle");
            const size_t size =
                granule_of(a, memory_on(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
            mapped(a, handle, size, 0, [&](CUdeviceptr ptr) {
                unsigned char back[256] = {};
                check(a.cuMemcpyDtoH(back, ptr, sizeof back), "cuMemcpyDtoH");
                if (back[0] != 0x5a) bench::fail("the imported pattern", -1);
            });
            check(a.cuMemRelease(handle), "cuMemRelease");
        } else {
            CUmemoryPool pool = nullptr;
            check(a.cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                  "cuMemPoolImportFromShareableHandle");
            CUmemAccessDesc access{};
            access.location.type = CU_MEM_LOCATION_TYPE_DEVICE, access.location.id = 0;
            access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
            check(a.cuMemPoolSetAccess(pool, &access, 1), "cuMemPoolSetAccess");
            CUdeviceptr block = 0;
            check(a.cuMemPoolImportPointer(&block, pool, &m.data), "cuMemPoolImportPointer");
            unsigned char back[256] = {};
            check(a.cuMemcpyDtoH(back, block, sizeof back), "cuMemcpyDtoH");
            if (back[0] != 0x5a) bench::fail("the imported pool's pattern", -1);
            check(a.cuMemFreeAsync(block, s), "cuMemFreeAsync");  // freed before the exporter frees it
            check(a.cuStreamSynchronize(s), "cuStreamSynchronize");
            check(a.cuMemPoolDestroy(pool), "cuMemPoolDestroy");
        }
        close(fd);
        answer(sock);
    }
    check(a.cuStreamDestroy(s), "cuStreamDestroy");
}

// A context on `ordinal` with the allocating checks (the second process at `sock` importing) and the link
// checks' copies in it, one GPU's copies at a time (doctor holds one lock around each GPU's copies, so
// that GPUs behind one switch do not share it), then released; the socket closed, so that the second
// process ends.
void context_with_checks(const Api& a, int ordinal, int sock, std::mutex& one_at_a_time) {
    CUcontext ctx = nullptr;
    check(a.cuDevicePrimaryCtxRetain(&ctx, ordinal), "cuDevicePrimaryCtxRetain");
    check(a.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    bench::mark("a device's context");
    allocating_checks(a, ordinal, sock);
    if (sock >= 0) shutdown(sock, SHUT_WR);  // no request left: the second process releases its context
    {
        const std::lock_guard<std::mutex> lock(one_at_a_time);
        link_copies(a, sock);
    }
    check(a.cuCtxSetCurrent(nullptr), "cuCtxSetCurrent");
    check(a.cuDevicePrimaryCtxRelease(ordinal), "cuDevicePrimaryCtxRelease");
    bench::mark("a device's context released");
}

// The second process: cuInit and its one device's context, in which it imports what the floor sends on
// descriptor 3 until the floor closes it.
int run_child() {
    const Api a = load_api();
    bench::mark("second process: dlopen libcuda, entry points");
    // A GPU the kernel lists and the driver does not show (CUDA_VISIBLE_DEVICES names no device): nothing
    // to serve, as doctor ends such an importer.
    const CUresult r = a.cuInit(0);
    if (r == CUDA_ERROR_NO_DEVICE) return 0;
    check(r, "cuInit");
    bench::mark("second process: cuInit");
    CUcontext ctx = nullptr;
    check(a.cuDevicePrimaryCtxRetain(&ctx, 0), "cuDevicePrimaryCtxRetain");
    check(a.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    bench::mark("second process: context");
    serve_imports(a, 3);
    check(a.cuCtxSetCurrent(nullptr), "cuCtxSetCurrent");
    check(a.cuDevicePrimaryCtxRelease(0), "cuDevicePrimaryCtxRelease");
    shutdown(3, SHUT_WR);  // says so to the floor, as doctor's importer does
    bench::mark("second process: imports served, context released");
    return 0;
}

// A second process that sees only the GPU `visible` names, with its end of a socket as descriptor 3.
struct Second {
    std::string visible;  // a UUID, or an ordinal
    pid_t pid = -1;
    int sock = -1;  // this process's end
};

Second start_second(const char* self, const std::string& visible) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) bench::fail("socketpair", -1);
    std::vector<std::string> env_text;
    for (char** e = environ; *e != nullptr; ++e) {
        if (std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0) env_text.emplace_back(*e);
    }
    env_text.push_back("CUDA_VISIBLE_DEVICES=" + visible);
    std::vector<char*> env;
    for (auto& t : env_text) env.push_back(t.data());
    env.push_back(nullptr);
    char child_arg[] = "child";
    char* argv[] = {const_cast<char*>(self), child_arg, nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pair[1], 3);
    Second out{visible, -1, pair[0]};
    if (posix_spawn(&out.pid, self, &actions, nullptr, argv, env.data()) != 0) bench::fail("posix_spawn", -1);
    posix_spawn_file_actions_destroy(&actions);
    close(pair[1]);
    return out;
}

// The UUIDs of the GPUs the kernel lists (/proc/driver/nvidia/gpus/*/information, under CUMEMCTL_SYSROOT
// where that names a fake system root, as doctor reads it), each once, as doctor starts its importers from
// them; none where the folder cannot be read, CUDA_VISIBLE_DEVICES is set or it lists more than 64.
std::vector<std::string> kernel_uuids() {
    std::vector<std::string> out;
    if (std::getenv("CUDA_VISIBLE_DEVICES") != nullptr) return out;
    const char* sysroot = std::getenv("CUMEMCTL_SYSROOT");
    const std::string root = std::string(sysroot != nullptr ? sysroot : "") + "/proc/driver/nvidia/gpus/";
    DIR* dir = opendir(root.c_str());
    if (dir == nullptr) return out;
    while (const dirent* e = readdir(dir)) {
        if (e->d_name[0] == '.') continue;
        std::ifstream info(root + e->d_name + "/information");
        std::string line;
        while (std::getline(info, line)) {
            if (line.rfind("GPU UUID:", 0) != 0) continue;
            const auto at = line.find("GPU-");
            if (at != std::string::npos && line.size() >= at + 40) out.push_back(line.substr(at, 40));
        }
        if (out.size() > 64) break;
    }
    closedir(dir);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    if (out.size() > 64) out.clear();
    return out;
}

std::string uuid_text(const CUuuid& u) {
    const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
    char text[48];
    std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                  b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    return text;
}

// full: NVML on its own thread and a second process per GPU the kernel lists, started first (their
// start-up overlaps this one's, as doctor's); cuInit (each GPU's second process started here where the
// kernel did not list it); per GPU on its own thread a context, the allocating checks and the link checks'
// copies; then the second processes waited for.
int run_full(const char* self) {
    long long nvml_sum = 0;
    std::thread nvml([&nvml_sum] { nvml_sum = query_nvml(); });
    std::vector<Second> seconds;
    for (const std::string& uuid : kernel_uuids()) seconds.push_back(start_second(self, uuid));
    bench::mark("second processes started");
    const Api a = load_api();
    bench::mark("dlopen libcuda, entry points");
    const int count = init(a);
    bench::mark("cuInit");
    // Each GPU's second process, by UUID: the one started first, else one started now (said in the
    // output, started_late; all of them where the kernel listed none). Those left (a GPU the driver does not
    // show) get their socket closed and end.
    const bool listed = !seconds.empty();
    std::vector<int> socks(static_cast<std::size_t>(count), -1);
    std::vector<Second> served;
    std::size_t late = 0;
    for (int i = 0; i < count; ++i) {
        CUuuid id{};
        check(a.cuDeviceGetUuid(&id, i), "cuDeviceGetUuid");
        const std::string uuid = uuid_text(id);
        auto it = std::find_if(seconds.begin(), seconds.end(), [&](const Second& s) { return s.visible == uuid; });
        if (it == seconds.end()) {
            seconds.push_back(start_second(self, uuid));
            it = seconds.end() - 1;
            if (listed) ++late;
        }
        std::swap(socks[static_cast<std::size_t>(i)], it->sock);
        served.push_back(*it);
        seconds.erase(it);
    }
    for (Second& unmatched : seconds) {
        close(unmatched.sock);
        int status = 0;
        waitpid(unmatched.pid, &status, 0);
    }
    std::mutex one_at_a_time;
    std::vector<std::thread> threads;
    for (int i = 0; i < count; ++i) {
        const int sock = socks[static_cast<std::size_t>(i)];
        threads.emplace_back([&a, i, sock, &one_at_a_time] { context_with_checks(a, i, sock, one_at_a_time); });
    }
    for (auto& t : threads) t.join();
    nvml.join();
    bench::mark("every device's thread and NVML's joined");
    int failed = 0;
    for (const Second& second : served) {
        int status = 0;
        if (waitpid(second.pid, &status, 0) != second.pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    }
    bench::mark("second processes ended");
    std::printf(
        "{\"floor\": \"doctor-full\", \"device_count\": %d, \"second_processes\": %zu, \"started_late\": %zu, "
        "\"failed\": %d, \"nvml\": %s}\n",
        count, served.size(), late, failed, nvml_sum < 0 ? "false" : "true");
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
