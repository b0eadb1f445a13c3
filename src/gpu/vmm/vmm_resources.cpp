#include "gpu/vmm/vmm_resources.hpp"

#include "cuda/driver_call.hpp"
#include "gpu/device/peer_access.hpp"

namespace cumemctl::gpu {

AllocationHandle::AllocationHandle(const DriverApi& api, CUmemGenericAllocationHandle handle)
    : api_(&api), handle_([&api](CUmemGenericAllocationHandle h) { return api.cuMemRelease(h); }, handle) {}

void AllocationHandle::release() {
    if (handle_) check(*api_, handle_.destroy(), "cuMemRelease");
}

AddressRange::AddressRange(const DriverApi& api, std::size_t size, std::size_t alignment)
    : api_(&api), size_(size), range_([&api, size](CUdeviceptr p) { return api.cuMemAddressFree(p, size); }) {
    CU_REQUIRE(api, cuMemAddressFree);
    CU_CALL(api, cuMemAddressReserve, range_.out(), size, alignment, 0, 0);
    base_ = range_.get();
}

void AddressRange::free() {
    if (range_) check(*api_, range_.destroy(), "cuMemAddressFree");
}

Mapping::Mapping(const DriverApi& api, CUdeviceptr ptr, std::size_t size, CUmemGenericAllocationHandle handle)
    : api_(&api), mapped_([&api, size](CUdeviceptr p) { return api.cuMemUnmap(p, size); }) {
    CU_REQUIRE(api, cuMemUnmap);
    CU_CALL(api, cuMemMap, ptr, size, 0, handle, 0);
    mapped_.reset(ptr);
}

void Mapping::unmap() {
    if (mapped_) check(*api_, mapped_.destroy(), "cuMemUnmap");
}

void grant_device_access(const DriverApi& api, CUdeviceptr ptr, std::size_t size, const std::vector<int>& devices) {
    const std::vector<CUmemAccessDesc> descs = read_write_descs(devices);
    CU_CALL(api, cuMemSetAccess, ptr, size, descs.data(), descs.size());
}

}  // namespace cumemctl::gpu
