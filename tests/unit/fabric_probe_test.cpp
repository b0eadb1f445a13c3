#include <doctest/doctest.h>

#include "driver_table.hpp"
#include "gpu/diagnosis/fabric_probe.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;

namespace {

// What the VMM lambdas below answer and count.
struct VmmModel {
    CUresult create = CUDA_SUCCESS;
    CUresult create_without_context = CUDA_SUCCESS;
    CUresult export_result = CUDA_SUCCESS;
    bool context_current = false;
    int live = 0;          // allocations not yet released
    std::size_t size = 0;  // the size asked of cuMemCreate
    int handle_types = 0;  // the handle types asked of cuMemCreate
    int exported_type = 0;
};

VmmModel& vmm() {
    static VmmModel m;
    return m;
}

DriverApi vmm_table() {
    vmm() = VmmModel{};
    testing_driver::model() = testing_driver::Model{};
    testing_driver::model().attrs = {{CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 1}};
    DriverApi api = testing_driver::table();
    api.cuCtxSetCurrent = [](CUcontext c) {
        vmm().context_current = c != nullptr;
        return CUDA_SUCCESS;
    };
    api.cuMemGetAllocationGranularity = [](size_t* g, const CUmemAllocationProp*, CUmemAllocationGranularity_flags) {
        *g = 2u << 20;
        return CUDA_SUCCESS;
    };
    api.cuMemCreate = [](CUmemGenericAllocationHandle* h, size_t size, const CUmemAllocationProp* prop,
                         unsigned long long) {
        if (!vmm().context_current && vmm().create_without_context != CUDA_SUCCESS) return vmm().create_without_context;
        if (vmm().create != CUDA_SUCCESS) return vmm().create;
        vmm().size = size;
        vmm().handle_types = prop->requestedHandleTypes;
        ++vmm().live;
        *h = 0x1234;
        return CUDA_SUCCESS;
    };
    api.cuMemExportToShareableHandle = [](void* out, CUmemGenericAllocationHandle, CUmemAllocationHandleType type,
                                          unsigned long long) {
        vmm().exported_type = type;
        if (vmm().export_result != CUDA_SUCCESS) return vmm().export_result;
        static_cast<CUmemFabricHandle*>(out)->data[0] = 1;
        return CUDA_SUCCESS;
    };
    api.cuMemRelease = [](CUmemGenericAllocationHandle) {
        --vmm().live;
        return CUDA_SUCCESS;
    };
    return api;
}

}  // namespace

TEST_CASE("the fabric probe makes, exports and releases one granule without a context") {
    const DriverApi api = vmm_table();
    const FabricProbe p = probe_fabric_handle(api, 0);
    CHECK(p.granularity == 2u << 20);
    CHECK(vmm().size == 2u << 20);
    CHECK(vmm().handle_types == CU_MEM_HANDLE_TYPE_FABRIC);
    CHECK(vmm().exported_type == CU_MEM_HANDLE_TYPE_FABRIC);
    CHECK(vmm().live == 0);
    CHECK_FALSE(p.needed_context);
    CHECK(testing_driver::model().retained == 0);
}

TEST_CASE("a driver that wants a context for cuMemCreate gets the primary one, released after") {
    const DriverApi api = vmm_table();
    vmm().create_without_context = CUDA_ERROR_INVALID_CONTEXT;
    const FabricProbe p = probe_fabric_handle(api, 0);
    CHECK(p.needed_context);
    CHECK(vmm().live == 0);
    CHECK(testing_driver::model().retained == 0);
    CHECK_FALSE(vmm().context_current);
}

TEST_CASE("NOT_PERMITTED from cuMemCreate or the export is diagnosed as no usable IMEX channel") {
    for (bool at_export : {false, true}) {
        CAPTURE(at_export);
        const DriverApi api = vmm_table();
        (at_export ? vmm().export_result : vmm().create) = CUDA_ERROR_NOT_PERMITTED;
        try {
            probe_fabric_handle(api, 0, "/nonexistent/nvidia-caps-imex-channels");
            FAIL("no error");
        } catch (const Error& e) {
            REQUIRE(e.problem().driver.has_value());
            CHECK(e.problem().driver->call == (at_export ? "cuMemExportToShareableHandle" : "cuMemCreate"));
            CHECK(e.exit_code() == ExitCode::permission);
            CHECK(e.problem().cause.find("need an IMEX channel node that this process can open, and there is none: "
                                         "/nonexistent/nvidia-caps-imex-channels does not exist") != std::string::npos);
            CHECK(e.problem().remedy.find("cumemctl imex-setup") != std::string::npos);
            CHECK(e.problem().device == 0);
        }
        CHECK(vmm().live == 0);  // the allocation made before a failed export is released
    }
}

TEST_CASE("a device without fabric handles is unavailable before any allocation") {
    const DriverApi api = vmm_table();
    testing_driver::model().attrs[CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED] = 0;
    try {
        probe_fabric_handle(api, 0);
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(e.exit_code() == ExitCode::unavailable);
        CHECK(e.problem().message == "device 0 does not support fabric handles");
    }
    CHECK(vmm().size == 0);
}

TEST_CASE("other failures keep the driver's words and get no IMEX diagnosis") {
    const DriverApi api = vmm_table();
    vmm().create = CUDA_ERROR_UNKNOWN;
    try {
        probe_fabric_handle(api, 0);
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(e.problem().cause.empty());
        CHECK(e.exit_code() == ExitCode::failed);
    }
}
