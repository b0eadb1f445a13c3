#include "gpu/device_mapping.hpp"

namespace cumemctl {

DeviceMapping::DeviceMapping(const DriverApi& api, CUmemGenericAllocationHandle handle, std::size_t size,
                             std::size_t alignment, const std::vector<int>& devices, std::vector<TimedStep>& steps,
                             const Diagnoser& diagnose) {
    timed_step(
        steps, "reserve", "cuMemAddressReserve", [&] { range_.emplace(api, size, alignment); }, diagnose);
    timed_step(
        steps, "map", "cuMemMap", [&] { mapping_.emplace(api, range_->base(), size, handle); }, diagnose);
    timed_step(
        steps, "access", "cuMemSetAccess", [&] { grant_device_access(api, range_->base(), size, devices); }, diagnose);
}

void DeviceMapping::release(std::vector<TimedStep>& steps, const Diagnoser& diagnose) {
    if (mapping_)
        timed_step(
            steps, "unmap", "cuMemUnmap", [&] { mapping_->unmap(); }, diagnose);
    if (range_)
        timed_step(
            steps, "free-address", "cuMemAddressFree", [&] { range_->free(); }, diagnose);
}

}  // namespace cumemctl
