// Access for several devices to one allocation or pool (create --access): which devices, whether a
// device may reach another's memory as a peer (checked before anything is made), read-write
// descriptors for cuMemSetAccess and cuMemPoolSetAccess, the access read back, and the pattern checked
// from another device in that device's primary context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"
#include "cuda/driver_api.hpp"
#include "gpu/verify/verify.hpp"

namespace cumemctl::gpu {

// One device's access as the driver reports it (cuMemGetAccess or cuMemPoolGetAccess).
struct DeviceAccess {
    int device = 0;
    CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    bool peer = false;  // another device's memory, reached as a peer
};

// The pattern checked from one device other than the one that wrote it.
struct DeviceCheck {
    int device = 0;
    VerifyResult check;
};

// The devices given access: `device` (whose context makes and fills the memory) first, then the
// listed ones in order, without repeats.
std::vector<int> access_devices(int device, const std::vector<int>& listed);

// One read-write descriptor per device.
std::vector<CUmemAccessDesc> read_write_descs(const std::vector<int>& devices);

// The words for leaving `device` out of `access` (how the caller names the devices given access) when
// it cannot reach the owner's memory as a peer: the remedy of NoPeerAccessError, which a caller that
// names the devices otherwise (create: --access) builds again with this.
std::string no_peer_access_remedy(int device, std::string_view access);

// "unavailable" (exit 3): `device` cannot access `owner`'s memory as a peer (cuDeviceCanAccessPeer
// said 0). Its remedy names the devices given access as setting_name does (base/setting.hpp).
class NoPeerAccessError : public Error {
public:
    NoPeerAccessError(int device, int owner);
    int device;
    int owner;
};

// Before anything is made: throws NoPeerAccessError naming the pair unless every device in `devices`
// other than `owner` can access `owner`'s memory as a peer (cuDeviceCanAccessPeer).
// owner -1 (host memory): nothing to check, any device may be granted access.
void require_peer_access(const DriverApi& api, int owner, const std::vector<int>& devices);

// "read-write", "read" or "none".
const char* access_flags_name(CUmemAccess_flags flags);

// What each device may do with the mapping at `ptr` (cuMemGetAccess); owner -1 for host memory.
std::vector<DeviceAccess> mapping_access(const DriverApi& api, CUdeviceptr ptr, int owner,
                                         const std::vector<int>& devices);

// What each device may do with the pool's memory (cuMemPoolGetAccess); owner -1 for a host pool.
std::vector<DeviceAccess> pool_device_access(const DriverApi& api, CUmemoryPool pool, int owner,
                                             const std::vector<int>& devices);

// Checks the pattern for `seed` over [ptr, ptr + size) with `device`: retains its primary context,
// makes it current, runs check_pattern, unloads the kernels there and makes the caller's context
// current again. Throws Error (the context is released and the caller's restored on every path).
VerifyResult check_from_device(const DriverApi& api, int device, CUdeviceptr ptr, std::size_t size, std::uint64_t seed);

}  // namespace cumemctl::gpu
