#include "gpu/vmm_resources.hpp"

#include <utility>

#include "cuda/driver_call.hpp"
#include "gpu/peer_access.hpp"

namespace cumemctl {

AllocationHandle::AllocationHandle(AllocationHandle&& other) noexcept
    : api_(std::exchange(other.api_, nullptr)), handle_(std::exchange(other.handle_, 0)) {}

AllocationHandle& AllocationHandle::operator=(AllocationHandle&& other) noexcept {
    if (this != &other) {
        if (api_ != nullptr) api_->cuMemRelease(handle_);
        api_ = std::exchange(other.api_, nullptr);
        handle_ = std::exchange(other.handle_, 0);
    }
    return *this;
}

AllocationHandle::~AllocationHandle() {
    if (api_ != nullptr) api_->cuMemRelease(handle_);
}

void AllocationHandle::release() {
    if (api_ == nullptr) return;
    check(*api_, api_->cuMemRelease(handle_), "cuMemRelease");
    api_ = nullptr;
}

AddressRange::AddressRange(const DriverApi& api, std::size_t size, std::size_t alignment) : api_(&api), size_(size) {
    require_entry(reinterpret_cast<const void*>(api.cuMemAddressFree), "cuMemAddressFree", 10020);
    CU_CALL(api, cuMemAddressReserve, &base_, size, alignment, 0, 0);
}

AddressRange::~AddressRange() {
    if (api_ != nullptr) api_->cuMemAddressFree(base_, size_);
}

void AddressRange::free() {
    if (api_ == nullptr) return;
    check(*api_, api_->cuMemAddressFree(base_, size_), "cuMemAddressFree");
    api_ = nullptr;
}

Mapping::Mapping(const DriverApi& api, CUdeviceptr ptr, std::size_t size, CUmemGenericAllocationHandle handle)
    : api_(&api), ptr_(ptr), size_(size) {
    require_entry(reinterpret_cast<const void*>(api.cuMemUnmap), "cuMemUnmap", 10020);
    CU_CALL(api, cuMemMap, ptr, size, 0, handle, 0);
}

Mapping::~Mapping() {
    if (api_ != nullptr) api_->cuMemUnmap(ptr_, size_);
}

void Mapping::unmap() {
    if (api_ == nullptr) return;
    check(*api_, api_->cuMemUnmap(ptr_, size_), "cuMemUnmap");
    api_ = nullptr;
}

void grant_device_access(const DriverApi& api, CUdeviceptr ptr, std::size_t size, const std::vector<int>& devices) {
    const std::vector<CUmemAccessDesc> descs = read_write_descs(devices);
    CU_CALL(api, cuMemSetAccess, ptr, size, descs.data(), descs.size());
}

}  // namespace cumemctl
