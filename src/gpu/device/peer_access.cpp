#include "gpu/device/peer_access.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/setting.hpp"
#include "base/enum_words.hpp"
#include "cuda/driver_call.hpp"
#include "gpu/device/primary_context.hpp"
#include "gpu/verify/verify_module.hpp"

namespace cumemctl::gpu {

std::vector<int> access_devices(int device, const std::vector<int>& listed) {
    std::vector<int> devices{device};
    for (int d : listed) {
        if (std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
    }
    return devices;
}

std::vector<CUmemAccessDesc> read_write_descs(const std::vector<int>& devices) {
    std::vector<CUmemAccessDesc> descs;
    for (int d : devices) {
        CUmemAccessDesc desc{};
        desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        desc.location.id = d;
        desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        descs.push_back(desc);
    }
    return descs;
}

std::string no_peer_access_remedy(int device, std::string_view access) {
    return fmt::format(
        "leave device {} out of {}; peer access needs NVLink or PCIe peer-to-peer between the two "
        "GPUs ('nvidia-smi topo -p2p rw' shows which pairs have it)",
        device, access);
}

NoPeerAccessError::NoPeerAccessError(int device_ordinal, int owner_ordinal)
    : Error(ExitCode::unavailable,
            fmt::format("device {} cannot access the memory of device {} (cuDeviceCanAccessPeer: 0)", device_ordinal,
                        owner_ordinal),
            no_peer_access_remedy(device_ordinal, setting_name(Setting::access))),
      device(device_ordinal),
      owner(owner_ordinal) {}

void require_peer_access(const DriverApi& api, int owner, const std::vector<int>& devices) {
    if (owner < 0) return;
    for (int d : devices) {
        if (d == owner) continue;
        int can = 0;
        CU_CALL(api, cuDeviceCanAccessPeer, &can, d, owner);
        if (can != 0) continue;
        throw NoPeerAccessError(d, owner);
    }
}

namespace {

constexpr auto kAccessFlagWords = enum_words<CUmemAccess_flags>(
    {{CU_MEM_ACCESS_FLAGS_PROT_READWRITE, "read-write"}, {CU_MEM_ACCESS_FLAGS_PROT_READ, "read"}}, "none");

}  // namespace

const char* access_flags_name(CUmemAccess_flags flags) {
    return kAccessFlagWords.word(flags).data();  // the table's words are literals: NUL-terminated
}

std::vector<DeviceAccess> mapping_access(const DriverApi& api, CUdeviceptr ptr, int owner,
                                         const std::vector<int>& devices) {
    std::vector<DeviceAccess> out;
    for (int d : devices) {
        const CUmemLocation location{CU_MEM_LOCATION_TYPE_DEVICE, d};
        unsigned long long flags = 0;
        CU_CALL(api, cuMemGetAccess, &flags, &location, ptr);
        out.push_back({d, static_cast<CUmemAccess_flags>(flags), owner >= 0 && d != owner});
    }
    return out;
}

std::vector<DeviceAccess> pool_device_access(const DriverApi& api, CUmemoryPool pool, int owner,
                                             const std::vector<int>& devices) {
    std::vector<DeviceAccess> out;
    for (int d : devices) {
        CUmemLocation location{CU_MEM_LOCATION_TYPE_DEVICE, d};
        CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
        CU_CALL(api, cuMemPoolGetAccess, &flags, pool, &location);
        out.push_back({d, flags, owner >= 0 && d != owner});
    }
    return out;
}

VerifyResult check_from_device(const DriverApi& api, int device, CUdeviceptr ptr, std::size_t size,
                               std::uint64_t seed) {
    const PrimaryContext context(api, device);
    // The kernels stay loaded in a context until unloaded: unload them on every path, so that the
    // peer's context holds nothing of this check when it is released.
    try {
        const VerifyResult r = check_pattern(api, ptr, size, seed);
        unload_verify_kernels(api);
        return r;
    } catch (const Error&) {
        try {
            unload_verify_kernels(api);
        } catch (const Error&) {
            // The first failure is the one to report.
        }
        throw;
    }
}

}  // namespace cumemctl::gpu
