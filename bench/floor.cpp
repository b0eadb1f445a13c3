// bench_floor: the least a program can do to answer what `cumemctl devices --json` and
// `cumemctl granularity --json` answer. It loads libcuda.so.1 itself, resolves only the entry points
// it calls, calls cuInit and the same driver queries as cumemctl, and prints a small JSON document.
// No cumemctl code: this is the floor that the benchmark (bench/run.sh) holds cumemctl against.
//
//   bench_floor devices [--no-free]    as `cumemctl devices --json [--no-free]`
//   bench_floor granularity            as `cumemctl granularity --json`
//
// CUMEMCTL_LIBCUDA names another library (the fake driver, for the runner's --smoke mode only).
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench_driver.hpp"

namespace {

using bench::check;

// The entry points the floor calls, resolved through cuGetProcAddress_v2 with the ABI versions that
// cumemctl asks for (src/cuda/driver_api.hpp).
struct Api : bench::ContextApi, bench::IdentityApi {
    PFN_cuDriverGetVersion_v2020 cuDriverGetVersion = nullptr;
    PFN_cuDeviceGet_v2000 cuDeviceGet = nullptr;
    PFN_cuMemGetAllocationGranularity_v10020 cuMemGetAllocationGranularity = nullptr;
};

// dlopens the driver and resolves the table.
Api load_api() {
    const auto get_proc = bench::open_driver();
    Api a;
    bench::resolve_context(get_proc, a);
    bench::resolve_identity(get_proc, a);
    bench::resolve(get_proc, "cuDriverGetVersion", 2020, a.cuDriverGetVersion);
    bench::resolve(get_proc, "cuDeviceGet", 2000, a.cuDeviceGet);
    bench::resolve(get_proc, "cuMemGetAllocationGranularity", 10020, a.cuMemGetAllocationGranularity);
    return a;
}

// The driver version (which every cumemctl report names), cuInit and the device count, as
// Driver::load and Driver::init do.
int init(const Api& a, int& version) {
    check(a.cuDriverGetVersion(&version), "cuDriverGetVersion");
    const CUresult r = a.cuInit(0);
    if (r == CUDA_ERROR_NO_DEVICE) return 0;
    check(r, "cuInit");
    int count = 0;
    check(a.cuDeviceGetCount(&count), "cuDeviceGetCount");
    return count;
}

// An attribute's value as JSON text: "null" where the driver refuses it as unknown (INVALID_VALUE).
std::string attribute_text(const Api& a, CUdevice dev, int attribute) {
    int value = 0;
    const CUresult r = a.cuDeviceGetAttribute(&value, static_cast<CUdevice_attribute>(attribute), dev);
    if (r == CUDA_ERROR_INVALID_VALUE) return "null";
    check(r, "cuDeviceGetAttribute");
    return std::to_string(value);
}

// One device's answers as a JSON object (free memory is added by the caller).
std::string device_json(const Api& a, int ordinal) {
    CUdevice dev = 0;
    check(a.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
    char name[256] = {};
    check(a.cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName");
    CUuuid uuid{};
    std::string uuid_text;
    if (a.cuDeviceGetUuid(&uuid, dev) == CUDA_SUCCESS) {
        uuid_text = "GPU-";
        char byte[3];
        for (int i = 0; i < 16; ++i) {
            if (i == 4 || i == 6 || i == 8 || i == 10) uuid_text += '-';
            std::snprintf(byte, sizeof byte, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
            uuid_text += byte;
        }
    }
    char bus[32] = {};
    a.cuDeviceGetPCIBusId(bus, sizeof bus, dev);
    const std::string major = attribute_text(a, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    const std::string minor = attribute_text(a, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    size_t total = 0;
    check(a.cuDeviceTotalMem(&total, dev), "cuDeviceTotalMem");
    std::string j = "{\"ordinal\": " + std::to_string(ordinal) + ", \"name\": \"" + name + "\", \"uuid\": \"" +
                    uuid_text + "\", \"pci_bus_id\": \"" + bus + "\", \"compute_capability\": \"" + major + "." +
                    minor + "\", \"total_bytes\": " + std::to_string(total) + ", \"attributes\": [";
    for (std::size_t i = 0; i < std::size(bench::kCapabilityAttributes); ++i) {
        j += (i ? ", " : "") + attribute_text(a, dev, bench::kCapabilityAttributes[i]);
    }
    return j + "]";
}

// Free memory through the primary context, released again, as query_free_memory does.
long long free_bytes(const Api& a, int ordinal) {
    CUcontext ctx = nullptr;
    if (a.cuDevicePrimaryCtxRetain(&ctx, ordinal) != CUDA_SUCCESS) return -1;
    size_t free = 0, total = 0;
    CUresult r = a.cuCtxSetCurrent(ctx);
    if (r == CUDA_SUCCESS) r = a.cuMemGetInfo(&free, &total);
    a.cuCtxSetCurrent(nullptr);
    a.cuDevicePrimaryCtxRelease(ordinal);
    return r == CUDA_SUCCESS ? static_cast<long long>(free) : -1;
}

// `devices`: every device's answers, and free memory (one thread per device when there are several).
int run_devices(const Api& a, bool with_free) {
    int version = 0;
    const int count = init(a, version);
    std::vector<std::string> devices;
    for (int i = 0; i < count; ++i) devices.push_back(device_json(a, i));
    std::vector<long long> free(count, -1);
    if (with_free && count == 1) {
        free[0] = free_bytes(a, 0);
    } else if (with_free) {
        std::vector<std::thread> threads;
        for (int i = 0; i < count; ++i) threads.emplace_back([&a, &free, i] { free[i] = free_bytes(a, i); });
        for (auto& t : threads) t.join();
    }
    std::printf("{\"driver_version\": %d, \"device_count\": %d, \"devices\": [", version, count);
    for (int i = 0; i < count; ++i) {
        const std::string f = free[i] < 0 ? "null" : std::to_string(free[i]);
        std::printf("%s%s, \"free_bytes\": %s}", i ? ", " : "", devices[i].c_str(), f.c_str());
    }
    std::printf("]}\n");
    return 0;
}

// One granularity query: the minimum or recommended granularity of `prop`, or null where refused.
std::string granularity_text(const Api& a, const CUmemAllocationProp& prop, CUmemAllocationGranularity_flags option) {
    size_t g = 0;
    const CUresult r = a.cuMemGetAllocationGranularity(&g, &prop, option);
    return r == CUDA_SUCCESS ? std::to_string(g) : "null";
}

// `granularity`: for each device, location (device, host, the device's host NUMA node) x handle type
// (none, posix-fd, fabric) x flag set (none, generic compression, GPUDirect RDMA, tile pool), minimum
// and recommended, as `cumemctl granularity` asks them by default (src/gpu/device/granularity.cpp). A device
// without a host NUMA node has no host-numa rows (cumemctl reports them as skipped, with no query).
int run_granularity(const Api& a) {
    int version = 0;
    const int count = init(a, version);
    constexpr CUmemAllocationHandleType kHandleTypes[] = {
        CU_MEM_HANDLE_TYPE_NONE, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, CU_MEM_HANDLE_TYPE_FABRIC};
    std::printf("{\"driver_version\": %d, \"device_count\": %d, \"rows\": [", version, count);
    int rows = 0;
    for (int ordinal = 0; ordinal < count; ++ordinal) {
        const std::string numa = attribute_text(a, ordinal, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
        std::vector<CUmemLocation> locations{{CU_MEM_LOCATION_TYPE_DEVICE, ordinal}, {CU_MEM_LOCATION_TYPE_HOST, 0}};
        if (numa != "null" && std::stoi(numa) >= 0)
            locations.push_back({CU_MEM_LOCATION_TYPE_HOST_NUMA, std::stoi(numa)});
        for (const CUmemLocation& loc : locations) {
            for (CUmemAllocationHandleType ht : kHandleTypes) {
                for (int flag = 0; flag < 4; ++flag) {
                    CUmemAllocationProp prop{};
                    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
                    prop.location = loc;
                    prop.requestedHandleTypes = ht;
                    if (flag == 1) prop.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_GENERIC;
                    if (flag == 2) prop.allocFlags.gpuDirectRDMACapable = 1;
                    if (flag == 3) prop.allocFlags.usage = CU_MEM_CREATE_USAGE_TILE_POOL;
                    const std::string min = granularity_text(a, prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
                    const std::string rec = granularity_text(a, prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
                    std::printf(
                        "%s{\"device\": %d, \"location\": %d, \"id\": %d, \"handle_type\": %d, \"flag\": %d, "
                        "\"minimum_bytes\": %s, \"recommended_bytes\": %s}",
                        rows++ ? ", " : "", ordinal, static_cast<int>(loc.type), loc.id, static_cast<int>(ht), flag,
                        min.c_str(), rec.c_str());
                }
            }
        }
    }
    std::printf("]}\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string what = argc > 1 ? argv[1] : "";
    const bool no_free = argc > 2 && std::strcmp(argv[2], "--no-free") == 0;
    if (what != "devices" && what != "granularity") {
        std::fprintf(stderr, "usage: bench_floor devices [--no-free] | bench_floor granularity\n");
        return 2;
    }
    const Api api = load_api();
    return what == "devices" ? run_devices(api, !no_free) : run_granularity(api);
}
