#include "gpu/vmm/device_mapping.hpp"

namespace cumemctl::gpu {

DeviceMapping::DeviceMapping(const DriverApi& api, CUmemGenericAllocationHandle handle, std::size_t size,
                             std::size_t alignment, const std::vector<int>& devices, StepLog& steps) {
    steps.time("reserve", "cuMemAddressReserve", [&] { range_.emplace(api, size, alignment); });
    steps.time("map", "cuMemMap", [&] { mapping_.emplace(api, range_->base(), size, handle); });
    steps.time("access", "cuMemSetAccess", [&] { grant_device_access(api, range_->base(), size, devices); });
}

void DeviceMapping::release(StepLog& steps) {
    if (mapping_) steps.time("unmap", "cuMemUnmap", [&] { mapping_->unmap(); });
    if (range_) steps.time("free-address", "cuMemAddressFree", [&] { range_->free(); });
}

}  // namespace cumemctl::gpu
