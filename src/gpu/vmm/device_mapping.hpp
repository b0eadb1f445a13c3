// An allocation mapped read-write for one device, set up and torn down as steps: reserve an
// address range, map the allocation into it, grant one or more devices access; then unmap and free the range. create
// and its import check both do this.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "gpu/vmm/vmm_resources.hpp"
#include "steps/step_log.hpp"

namespace cumemctl::gpu {

// The guards of a mapped allocation; what is set up is released in reverse order when it goes.
class DeviceMapping {
public:
    // Steps "reserve" (cuMemAddressReserve), "map" (cuMemMap) and "access" (cuMemSetAccess) for
    // `size` bytes of `handle`, aligned to `alignment`, read-write for each of `devices` (one call).
    // Throws Error after recording the failed step (and releasing what was set up).
    DeviceMapping(const DriverApi& api, CUmemGenericAllocationHandle handle, std::size_t size, std::size_t alignment,
                  const std::vector<int>& devices, StepLog& steps);

    CUdeviceptr address() const { return range_->base(); }

    // Steps "unmap" (cuMemUnmap) and "free-address" (cuMemAddressFree). Throws Error on failure.
    void release(StepLog& steps);

private:
    std::optional<AddressRange> range_;  // declared first: destroyed last
    std::optional<Mapping> mapping_;
};

}  // namespace cumemctl::gpu
