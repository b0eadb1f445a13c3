#include "gpu/diagnosis/fabric_probe.hpp"

#include <optional>

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "cuda/owned_handle.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/diagnosis/diagnosis.hpp"
#include "gpu/device/primary_context.hpp"

namespace cumemctl::gpu {
namespace {

// Releases an allocation handle and then, if one was made, the primary context, whatever happens in
// between.
struct ProbeResources {
    explicit ProbeResources(const DriverApi& driver)
        : api(driver), handle([&driver](CUmemGenericAllocationHandle h) {
              return driver.cuMemRelease != nullptr ? driver.cuMemRelease(h) : CUDA_SUCCESS;
          }) {}

    const DriverApi& api;
    CUdevice device = 0;
    std::optional<PrimaryContext> context;             // only for drivers that want one for cuMemCreate
    OwnedHandle<CUmemGenericAllocationHandle> handle;  // released when the probe goes
};

CUmemAllocationProp fabric_prop(CUdevice device) {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    return prop;
}

void probe_steps(ProbeResources& res, const CUmemAllocationProp& prop, FabricProbe& result, StepLog& log) {
    const DriverApi& api = res.api;
    log.time("granularity", "cuMemGetAllocationGranularity", [&] {
        std::size_t granularity = 0;
        CU_CALL(api, cuMemGetAllocationGranularity, &granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
        result.granularity = granularity;
    });
    CU_REQUIRE(api, cuMemCreate);
    log.time("create", "cuMemCreate", [&] {
        CUmemGenericAllocationHandle created = 0;
        CUresult r = api.cuMemCreate(&created, result.granularity, &prop, 0);
        if (r == CUDA_ERROR_INVALID_CONTEXT) {
            res.context.emplace(api, res.device);
            result.needed_context = true;
            created = 0;
            r = api.cuMemCreate(&created, result.granularity, &prop, 0);
        }
        check(api, r, "cuMemCreate");
        res.handle.reset(created);
    });
    log.time("export", "cuMemExportToShareableHandle", [&] {
        CUmemFabricHandle fabric{};
        CU_CALL(api, cuMemExportToShareableHandle, &fabric, res.handle.get(), CU_MEM_HANDLE_TYPE_FABRIC, 0);
    });
    log.time("release", "cuMemRelease", [&] { CU_CALL(api, cuMemRelease, res.handle.release()); });
}

}  // namespace

FabricProbe probe_fabric_handle(const DriverApi& api, int device, const std::string& imex_channel_dir) {
    StepLog log;
    return probe_fabric_handle(api, device, imex_channel_dir, log);
}

FabricProbe probe_fabric_handle(const DriverApi& api, int device, const std::string& imex_channel_dir, StepLog& log) {
    FabricProbe result;
    result.device = device;
    ProbeResources res{api};
    log.time("device", "cuDeviceGet", [&] { CU_CALL(api, cuDeviceGet, &res.device, device); });
    const std::optional<int> fabric =
        device_attribute(api, res.device, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED);
    if (fabric && *fabric == 0) {
        Problem p;
        p.exit_code = ExitCode::unavailable;
        p.device = device;
        p.message = fmt::format("device {} does not support fabric handles", device);
        p.cause = "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED is 0 on this device and driver";
        p.remedy =
            "fabric handles (and IMEX channels) need a device and a driver that support them "
            "('cumemctl devices' shows which devices do)";
        throw Error(std::move(p));
    }
    const CUmemAllocationProp prop = fabric_prop(res.device);
    try {
        probe_steps(res, prop, result, log);
    } catch (Error& e) {
        DiagnosisContext context;
        context.device = device;
        context.prop = prop;
        context.handle_type = CU_MEM_HANDLE_TYPE_FABRIC;
        if (result.granularity != 0) context.size = context.granularity = result.granularity;
        context.imex_channel_dir = imex_channel_dir;
        diagnose_problem(api, e.problem(), context);
        throw;
    }
    return result;
}

}  // namespace cumemctl::gpu
