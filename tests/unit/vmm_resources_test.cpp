#include <doctest/doctest.h>

#include "driver_table.hpp"
#include "gpu/vmm/vmm_resources.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;

namespace {

// What the guards called, and what the next calls answer.
struct VmmCalls {
    int release = 0, free = 0, unmap = 0, map = 0;
    CUresult release_result = CUDA_SUCCESS;
    CUresult map_result = CUDA_SUCCESS;
};
VmmCalls& vmm_calls() {
    static VmmCalls c;
    return c;
}

DriverApi vmm_api() {
    auto api = testing_driver::table();
    api.cuMemRelease = [](CUmemGenericAllocationHandle) {
        ++vmm_calls().release;
        return std::exchange(vmm_calls().release_result, CUDA_SUCCESS);
    };
    api.cuMemAddressReserve = [](CUdeviceptr* p, size_t, size_t, CUdeviceptr, unsigned long long) {
        *p = 0x200000;
        return CUDA_SUCCESS;
    };
    api.cuMemAddressFree = [](CUdeviceptr, size_t) {
        ++vmm_calls().free;
        return CUDA_SUCCESS;
    };
    api.cuMemMap = [](CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long) {
        ++vmm_calls().map;
        return vmm_calls().map_result;
    };
    api.cuMemUnmap = [](CUdeviceptr, size_t) {
        ++vmm_calls().unmap;
        return CUDA_SUCCESS;
    };
    return api;
}

}  // namespace

TEST_CASE("the guards release what they hold, once, on every path") {
    vmm_calls() = {};
    const auto api = vmm_api();
    {
        AllocationHandle h(api, 0x10);
        AddressRange range(api, 2 << 20, 2 << 20);
        CHECK(range.base() == 0x200000);
        Mapping m(api, range.base(), 2 << 20, h.get());
    }
    CHECK(vmm_calls().unmap == 1);
    CHECK(vmm_calls().free == 1);
    CHECK(vmm_calls().release == 1);

    vmm_calls() = {};
    {
        AllocationHandle h(api, 0x10);
        h.release();
        h.release();
    }
    CHECK(vmm_calls().release == 1);

    // A refused release throws and leaves the guard to try again when it goes.
    vmm_calls() = {};
    vmm_calls().release_result = CUDA_ERROR_INVALID_VALUE;
    {
        AllocationHandle h(api, 0x10);
        CHECK_THROWS_AS(h.release(), Error);
    }
    CHECK(vmm_calls().release == 2);

    // A mapping the driver refuses leaves nothing to unmap.
    vmm_calls() = {};
    vmm_calls().map_result = CUDA_ERROR_OUT_OF_MEMORY;
    {
        AddressRange range(api, 2 << 20, 0);
        CHECK_THROWS_AS(Mapping(api, range.base(), 2 << 20, 0x10), Error);
    }
    CHECK(vmm_calls().unmap == 0);
    CHECK(vmm_calls().free == 1);
}
