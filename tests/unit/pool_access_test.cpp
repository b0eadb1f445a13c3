#include <doctest/doctest.h>

#include <string>

#include "driver_table.hpp"
#include "gpu/pool/pool_access.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;

namespace {

// What the pool entry points below saw and answer.
struct PoolModel {
    std::string last_call;
    CUmemPoolProps created{};
    int destroyed = 0;
    CUresult create_result = CUDA_SUCCESS;
};
PoolModel& pm() {
    static PoolModel m;
    return m;
}
CUmemoryPool handle(std::uintptr_t n) {
    return reinterpret_cast<CUmemoryPool>(n);
}

// The device table plus pool entry points; `cuda13` adds the location-and-type ones.
DriverApi pool_table(bool cuda13) {
    pm() = PoolModel{};
    DriverApi api = testing_driver::table();
    api.cuDeviceGetDefaultMemPool = [](CUmemoryPool* p, CUdevice) {
        pm().last_call = "cuDeviceGetDefaultMemPool";
        *p = handle(0x10);
        return CUDA_SUCCESS;
    };
    api.cuDeviceGetMemPool = [](CUmemoryPool* p, CUdevice) {
        pm().last_call = "cuDeviceGetMemPool";
        *p = handle(0x10);
        return CUDA_SUCCESS;
    };
    api.cuDeviceSetMemPool = [](CUdevice, CUmemoryPool) {
        pm().last_call = "cuDeviceSetMemPool";
        return CUDA_SUCCESS;
    };
    api.cuMemPoolCreate = [](CUmemoryPool* p, const CUmemPoolProps* props) {
        pm().created = *props;
        *p = handle(0x20);
        return pm().create_result;
    };
    api.cuMemPoolDestroy = [](CUmemoryPool) {
        ++pm().destroyed;
        return CUDA_SUCCESS;
    };
    if (cuda13) {
        api.cuMemGetDefaultMemPool = [](CUmemoryPool* p, CUmemLocation*, CUmemAllocationType) {
            pm().last_call = "cuMemGetDefaultMemPool";
            *p = handle(0x30);
            return CUDA_SUCCESS;
        };
        api.cuMemSetMemPool = [](CUmemLocation*, CUmemAllocationType, CUmemoryPool) {
            pm().last_call = "cuMemSetMemPool";
            return CUDA_SUCCESS;
        };
    }
    return api;
}

void pool_device(std::map<int, int> extra = {}) {
    auto& m = testing_driver::model();
    m = testing_driver::Model{};
    m.attrs = {{CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 1}, {CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 0}};
    for (auto [k, v] : extra) m.attrs[k] = v;
}

const CUmemLocation kDevice{CU_MEM_LOCATION_TYPE_DEVICE, 0};
const CUmemLocation kHost{CU_MEM_LOCATION_TYPE_HOST, 0};

}  // namespace

TEST_CASE("default_pool uses the CUDA 13 entry point where the driver has it") {
    pool_device();
    const DriverApi api = pool_table(true);
    const PoolInfo p = default_pool(api, 0, kHost, CU_MEM_ALLOCATION_TYPE_PINNED);
    CHECK(p.queried_with == "cuMemGetDefaultMemPool");
    CHECK(p.handle == handle(0x30));
    CHECK_FALSE(p.handle_types.has_value());
    CHECK_FALSE(p.max_size.has_value());
}

TEST_CASE("default and current pools fall back to the device entry points for device memory") {
    pool_device();
    const DriverApi api = pool_table(false);
    CHECK(default_pool(api, 0, kDevice, CU_MEM_ALLOCATION_TYPE_PINNED).queried_with == "cuDeviceGetDefaultMemPool");
    CHECK(current_pool(api, 0, kDevice, CU_MEM_ALLOCATION_TYPE_PINNED).queried_with == "cuDeviceGetMemPool");
    make_current(api, PoolInfo{handle(0x20), 0, kDevice, CU_MEM_ALLOCATION_TYPE_PINNED, {}, {}, {}});
    CHECK(pm().last_call == "cuDeviceSetMemPool");
    try {
        default_pool(api, 0, kDevice, CU_MEM_ALLOCATION_TYPE_MANAGED);
        FAIL("managed pools need CUDA 13");
    } catch (const Error& e) {
        CHECK(e.exit_code() == ExitCode::unavailable);
        CHECK(e.problem().message ==
              "this driver has no cuMemGetDefaultMemPool (CUDA 13.0), which managed pools at location device need");
    }
    CHECK_THROWS_AS(current_pool(api, 0, kHost, CU_MEM_ALLOCATION_TYPE_PINNED), Error);
}

TEST_CASE("check_pool_support names the attribute a location or handle type lacks") {
    pool_device({{CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR},
                 {CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED, 0}});
    const DriverApi api = pool_table(true);
    CHECK_NOTHROW(check_pool_support(api, 0, kDevice, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    auto message = [&](CUmemLocation loc, CUmemAllocationHandleType type) {
        try {
            check_pool_support(api, 0, loc, type);
        } catch (const Error& e) {
            CHECK(e.exit_code() == ExitCode::unavailable);
            return e.problem().message;
        }
        return std::string();
    };
    CHECK(message(kHost, CU_MEM_HANDLE_TYPE_NONE) ==
          "device 0 has no host memory pools (CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED is unknown to this "
          "driver)");
    CHECK(message({CU_MEM_LOCATION_TYPE_HOST_NUMA, 0}, CU_MEM_HANDLE_TYPE_NONE) ==
          "device 0 has no host-NUMA memory pools (CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED is 0)");
    CHECK(message(kDevice, CU_MEM_HANDLE_TYPE_FABRIC) ==
          "device 0's pools do not support fabric handles (CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES: "
          "posix-fd)");
}

TEST_CASE("OwnedPool creates with the request's properties and destroys once") {
    pool_device({{CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, 9}});
    const DriverApi api = pool_table(true);
    {
        PoolRequest r;
        r.handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        r.max_size = 1ULL << 30;
        const OwnedPool pool(api, 0, r);
        CHECK(pm().created.allocType == CU_MEM_ALLOCATION_TYPE_PINNED);
        CHECK(pm().created.location.type == CU_MEM_LOCATION_TYPE_DEVICE);
        CHECK(pm().created.handleTypes == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        CHECK(pm().created.maxSize == 1ULL << 30);
        CHECK(pool.info().handle_types == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        CHECK(pool.info().max_size == 1ULL << 30);
        CHECK(pm().destroyed == 0);
    }
    CHECK(pm().destroyed == 1);
}

TEST_CASE("OwnedPool says a host NUMA node the driver refuses is unavailable") {
    pool_device({{CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED, 1}});
    const DriverApi api = pool_table(true);
    pm().create_result = CUDA_ERROR_INVALID_VALUE;
    PoolRequest r;
    r.location = parse_location("host-numa:5");
    try {
        const OwnedPool pool(api, 0, r);
        FAIL("created");
    } catch (const Error& e) {
        CHECK(e.exit_code() == ExitCode::unavailable);
        CHECK(e.problem().message.find("the driver has no pool location host-numa:5 for device 0") == 0);
        CHECK(e.problem().remedy == "device 0's host NUMA node is 0: ask for location host-numa or host-numa:0");
    }
    CHECK(pm().destroyed == 0);
}
