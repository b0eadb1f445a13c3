#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "driver_table.hpp"
#include "gpu/diagnosis/diagnosis.hpp"
#include "gpu/device/memory_props.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;
namespace fs = std::filesystem;

namespace {

// A temporary folder, removed again.
struct TempDir {
    fs::path path;
    TempDir() {
        char templ[] = "/tmp/cumemctl-diag-XXXXXX";
        path = mkdtemp(templ);
    }
    ~TempDir() { fs::remove_all(path); }
};

DriverFailure failure(CUresult r, const char* call = "cuMemCreate") {
    return DriverFailure{call, static_cast<int>(r), "NAME", "text"};
}

CUmemAllocationProp prop_of(CUmemLocationType type, int id, unsigned handle_types) {
    CUmemAllocationProp p{};
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = type;
    p.location.id = id;
    p.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(handle_types);
    return p;
}

DiagnosisContext fabric_context(const std::string& dir) {
    DiagnosisContext c;
    c.device = 0;
    c.prop = prop_of(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_FABRIC);
    c.imex_channel_dir = dir;
    return c;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("NOT_PERMITTED on a fabric handle says what the IMEX channel folder holds") {
    const auto api = testing_driver::table();
    TempDir tmp;
    const std::string dir = (tmp.path / "imex-channels").string();

    auto d = diagnose(api, failure(CUDA_ERROR_NOT_PERMITTED), fabric_context(dir));
    REQUIRE(d);
    CHECK(d->exit_code == ExitCode::permission);
    CHECK(contains(d->cause, dir + " does not exist"));
    CHECK(contains(d->remedy, "cumemctl imex-setup"));

    fs::create_directory(dir);
    d = diagnose(api, failure(CUDA_ERROR_NOT_PERMITTED), fabric_context(dir));
    CHECK(contains(d->cause, dir + " holds no channel node"));

    std::ofstream(dir + "/channel0") << "not a device";
    d = diagnose(api, failure(CUDA_ERROR_NOT_PERMITTED), fabric_context(dir));
    CHECK(contains(d->cause, "channel0 is not a character device"));

    fs::remove(dir + "/channel0");
    if (mknod((dir + "/channel0").c_str(), S_IFCHR | 0600, makedev(1, 3)) == 0) {
        const bool root = geteuid() == 0;
        d = diagnose(api, failure(CUDA_ERROR_NOT_PERMITTED, "cuMemExportToShareableHandle"), fabric_context(dir));
        // root may open any node: then the driver's refusal points at the node's numbers.
        CHECK(contains(d->cause, root ? "refused fabric handles although" : "may not read and write"));
        CHECK(d->exit_code == ExitCode::permission);
    } else {
        MESSAGE("mknod is not permitted here: the character-device cases are not exercised");
    }
}

TEST_CASE("NOT_PERMITTED without a fabric handle is not explained as IMEX") {
    const auto api = testing_driver::table();
    DiagnosisContext c;
    c.prop = prop_of(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    CHECK_FALSE(diagnose(api, failure(CUDA_ERROR_NOT_PERMITTED), c));
    // An import or export names its handle type instead of properties.
    DiagnosisContext imported;
    imported.handle_type = CU_MEM_HANDLE_TYPE_FABRIC;
    imported.imex_channel_dir = "/nonexistent/imex";
    const auto d = diagnose(api, failure(CUDA_ERROR_NOT_PERMITTED, "cuMemImportFromShareableHandle"), imported);
    REQUIRE(d);
    CHECK(contains(d->cause, "/nonexistent/imex does not exist"));
}

TEST_CASE("NOT_SUPPORTED names the device attribute that is 0, or that the driver does not know") {
    auto& m = testing_driver::model();
    m = testing_driver::Model{};
    m.attrs = {{CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1},
               {CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0},
               {CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED, 0}};
    const auto api = testing_driver::table();
    DiagnosisContext c;
    c.device = 0;
    c.prop = prop_of(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_FABRIC);
    auto d = diagnose(api, failure(CUDA_ERROR_NOT_SUPPORTED), c);
    REQUIRE(d);
    CHECK(d->exit_code == ExitCode::unavailable);
    CHECK(contains(d->cause, "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 0"));

    c.prop = prop_of(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_NONE);
    c.prop->allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_GENERIC;
    d = diagnose(api, failure(CUDA_ERROR_NOT_SUPPORTED), c);
    CHECK(contains(d->cause, "CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED = 0"));

    c.prop = prop_of(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_NONE);
    c.prop->allocFlags.gpuDirectRDMACapable = 1;  // attribute absent from the model
    d = diagnose(api, failure(CUDA_ERROR_NOT_SUPPORTED), c);
    CHECK(contains(d->cause, "does not know CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED"));

    m.attrs[CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED] = 1;
    d = diagnose(api, failure(CUDA_ERROR_NOT_SUPPORTED), c);
    CHECK(contains(d->cause, "every device attribute for this request is 1"));
}

TEST_CASE("OUT_OF_MEMORY gives the device's free memory through the current context") {
    auto& m = testing_driver::model();
    m = testing_driver::Model{};
    auto api = testing_driver::table();
    api.cuCtxGetCurrent = [](CUcontext* c) {
        *c = reinterpret_cast<CUcontext>(0x1);
        return CUDA_SUCCESS;
    };
    DiagnosisContext c;
    c.device = 0;
    c.prop = prop_of(CU_MEM_LOCATION_TYPE_DEVICE, 0, 0);
    c.size = 200ULL << 30;
    const auto d = diagnose(api, failure(CUDA_ERROR_OUT_OF_MEMORY), c);
    REQUIRE(d);
    CHECK(d->cause == "device 0 has 70 GiB free of 80 GiB; 200 GiB were asked for");
    CHECK(d->exit_code == ExitCode::failed);

    api.cuCtxGetCurrent = [](CUcontext* c) {
        *c = nullptr;
        return CUDA_SUCCESS;
    };
    CHECK(contains(diagnose(api, failure(CUDA_ERROR_OUT_OF_MEMORY), c)->cause, "free memory is unknown"));
    c.prop = prop_of(CU_MEM_LOCATION_TYPE_HOST, 0, 0);
    CHECK(contains(diagnose(api, failure(CUDA_ERROR_OUT_OF_MEMORY), c)->cause, "the host has"));
}

TEST_CASE("INVALID_VALUE names the property the driver rejected where it can be known") {
    auto& m = testing_driver::model();
    m = testing_driver::Model{};
    m.attrs = {{CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 0},
               {CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1},
               {CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1}};
    const auto api = testing_driver::table();
    DiagnosisContext c;
    c.device = 0;
    c.prop = prop_of(CU_MEM_LOCATION_TYPE_DEVICE, 0, 0);
    c.size = 12345;
    c.granularity = 2ULL << 20;
    auto d = diagnose(api, failure(CUDA_ERROR_INVALID_VALUE), c);
    REQUIRE(d);
    CHECK(d->exit_code == ExitCode::usage);
    CHECK(contains(d->cause, "not a multiple of the granularity 2 MiB"));
    CHECK(contains(d->cause, "2 MiB (2097152 bytes) and 4 MiB (4194304 bytes)"));

    c.size.reset();
    c.prop = prop_of(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    d = diagnose(api, failure(CUDA_ERROR_INVALID_VALUE), c);
    CHECK(d->exit_code == ExitCode::usage);
    CHECK(contains(d->cause, "host allocations cannot be shared"));

    c.prop = prop_of(CU_MEM_LOCATION_TYPE_HOST_NUMA, 5, 0);
    d = diagnose(api, failure(CUDA_ERROR_INVALID_VALUE), c);
    CHECK(contains(d->cause, "refused host NUMA node 5"));
    CHECK(contains(d->cause, "nearest node is 0"));

    m.attrs.erase(CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED);
    c.prop = prop_of(CU_MEM_LOCATION_TYPE_HOST, 0, 0);
    d = diagnose(api, failure(CUDA_ERROR_INVALID_VALUE, "cuMemGetAllocationGranularity"), c);
    CHECK(d->exit_code == ExitCode::unavailable);
    CHECK(contains(d->cause, "does not know CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED"));

    c.prop = prop_of(CU_MEM_LOCATION_TYPE_DEVICE, 0, 0);
    c.prop->allocFlags.usage = CU_MEM_CREATE_USAGE_TILE_POOL;
    d = diagnose(api, failure(CUDA_ERROR_INVALID_VALUE), c);
    CHECK(contains(d->cause, "location device 0, handle type none, flags tile-pool"));
    // A combination refused for no reason found asks the person to change the request, marked so that a
    // caller that made the request itself (doctor) words its own remedy; the reasons found above do not.
    CHECK(d->remedy_changes_request);
    Problem refused;
    refused.driver = failure(CUDA_ERROR_INVALID_VALUE);
    diagnose_problem(api, refused, c);
    CHECK(refused.remedy_changes_request);
    c.prop = prop_of(CU_MEM_LOCATION_TYPE_HOST_NUMA, 5, 0);
    CHECK_FALSE(diagnose(api, failure(CUDA_ERROR_INVALID_VALUE), c)->remedy_changes_request);

    CHECK_FALSE(diagnose(api, failure(CUDA_ERROR_INVALID_VALUE, "cuMemMap"), DiagnosisContext{}));
}

TEST_CASE("diagnose_problem fills cause, remedy, exit code and device, with a general remedy as fallback") {
    const auto api = testing_driver::table();
    Problem p;
    p.driver = failure(CUDA_ERROR_NOT_PERMITTED);
    p.exit_code = ExitCode::permission;
    DiagnosisContext c = fabric_context("/nonexistent/imex");
    c.device = 2;
    diagnose_problem(api, p, c);
    CHECK(p.device == 2);
    CHECK(contains(p.cause, "/nonexistent/imex does not exist"));

    Problem q;
    q.driver = failure(CUDA_ERROR_LAUNCH_FAILED, "cuMemMap");
    diagnose_problem(api, q, DiagnosisContext{});
    CHECK(q.cause.empty());
    CHECK(contains(q.remedy, "the driver refused cuMemMap"));
    CHECK(q.exit_code == ExitCode::failed);
}

TEST_CASE("nearest_valid_sizes gives the multiples around a size") {
    const std::uint64_t g = 2ULL << 20;
    CHECK(nearest_valid_sizes(12345, g).lower == g);
    CHECK(nearest_valid_sizes(12345, g).upper == 2 * g);
    CHECK(nearest_valid_sizes(3 * g + 1, g).lower == 3 * g);
    CHECK(nearest_valid_sizes(3 * g + 1, g).upper == 4 * g);
    const std::uint64_t max = ~0ULL;
    const auto top = nearest_valid_sizes(max, g);
    CHECK(top.upper == max - max % g);
    CHECK(top.lower == top.upper - g);
}

TEST_CASE("size_diagnosis gives the nearest sizes as data and a remedy that names no option") {
    const std::uint64_t g = 2ULL << 20;
    const Diagnosis d = size_diagnosis(12345, g);
    CHECK(d.exit_code == ExitCode::usage);
    REQUIRE(d.size);
    CHECK(d.size->size == 12345);
    CHECK(d.size->granularity == g);
    CHECK(d.size->nearest.lower == g);
    CHECK(d.size->nearest.upper == 2 * g);
    CHECK(contains(d.cause, "the nearest valid sizes are 2 MiB (2097152 bytes) and 4 MiB (4194304 bytes)"));
    CHECK(d.remedy.find("--") == std::string::npos);
    const Problem p = size_mismatch_problem(*d.size);
    CHECK(p.exit_code == ExitCode::usage);
    CHECK(p.message == "size 12345 is not a multiple of the allocation granularity 2 MiB");
    CHECK(p.cause == d.cause);
    CHECK(p.remedy == "give one of those sizes");
}

TEST_CASE("DEVICE_UNAVAILABLE on a context says the device is held by another process, and what to do") {
    auto& m = testing_driver::model();
    m = testing_driver::Model{};
    const auto api = testing_driver::table();
    DiagnosisContext c;
    c.device = 0;
    auto d = diagnose(api, failure(CUDA_ERROR_DEVICE_UNAVAILABLE, "cuDevicePrimaryCtxRetain"), c);
    REQUIRE(d);
    CHECK(d->cause ==
          "device 0 is unavailable to this process: it is in exclusive-process compute mode and another process "
          "holds its context; nothing was allocated on it");
    CHECK(contains(d->remedy, "nvidia-smi -c DEFAULT"));
    CHECK(d->exit_code == ExitCode::unavailable);
    m.attrs[CU_DEVICE_ATTRIBUTE_COMPUTE_MODE] = CU_COMPUTEMODE_PROHIBITED;
    d = diagnose(api, failure(CUDA_ERROR_DEVICE_UNAVAILABLE, "cuCtxCreate"), c);
    REQUIRE(d);
    CHECK(contains(d->cause, "its compute mode is prohibited"));
    m = testing_driver::Model{};
}

TEST_CASE("OUT_OF_MEMORY on a context says the device has no memory left for one") {
    const auto api = testing_driver::table();
    DiagnosisContext c;
    c.device = 1;
    const auto d = diagnose(api, failure(CUDA_ERROR_OUT_OF_MEMORY, "cuDevicePrimaryCtxRetain"), c);
    REQUIRE(d);
    CHECK(d->cause ==
          "device 1 has no memory left for a context: other processes hold it; nothing was allocated on it");
    CHECK(contains(d->remedy, "nvidia-smi"));
    CHECK(d->exit_code == ExitCode::failed);
}
