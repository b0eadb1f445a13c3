// The fake driver's virtual memory management: cuMemCreate and friends, with the rules the real driver
// applies (granularity multiples, supported locations and handle types, IMEX channel for fabric, device
// memory accounting), memfd-backed so that exported handles work across processes.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "fake_locality.hpp"
#include "fake_memory.hpp"

namespace fake {
namespace {

struct Mapping {
    std::size_t size = 0;
    CUmemGenericAllocationHandle handle = 0;
    AccessMask access = 0;   // the devices granted read-write access (cuMemSetAccess)
    std::size_t offset = 0;  // into the allocation
};

std::map<CUmemGenericAllocationHandle, Allocation>& allocations() {
    static auto* a = new std::map<CUmemGenericAllocationHandle, Allocation>;
    return *a;
}
std::map<std::uintptr_t, Reservation>& reservations() {
    static auto* r = new std::map<std::uintptr_t, Reservation>;
    return *r;
}
std::map<std::uintptr_t, Mapping>& mappings() {
    static auto* m = new std::map<std::uintptr_t, Mapping>;
    return *m;
}
CUmemGenericAllocationHandle next_handle = 0x1000;

// The attribute that gates a location type for VMM, or 0 where none does.
int location_attribute(CUmemLocationType type) {
    if (static_cast<int>(type) == kLocalized) return CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED;
    switch (type) {
        case CU_MEM_LOCATION_TYPE_DEVICE:
            return CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED;
        case CU_MEM_LOCATION_TYPE_HOST:
            return CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED;
        case CU_MEM_LOCATION_TYPE_HOST_NUMA:
            return CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED;
        default:
            return 0;
    }
}

bool device_has(int ordinal, int attribute) {
    const Device* d = device(ordinal);
    if (d == nullptr) return false;
    const auto it = d->attrs.find(attribute);
    return it != d->attrs.end() && it->second != 0;
}

// The cuMemCreate documentation: "HOST allocations are not IPC capable and requestedHandleTypes must be
// 0, any other value will result in CUDA_ERROR_INVALID_VALUE". Granularity queries apply it too.
bool host_with_handle_types(const CUmemAllocationProp& prop) {
    return prop.location.type == CU_MEM_LOCATION_TYPE_HOST && prop.requestedHandleTypes != 0;
}

// Checks the properties as the driver does; sets the device whose memory is used (-1 for host).
CUresult check_prop(const CUmemAllocationProp& prop, int& owner) {
    if (prop.type != CU_MEM_ALLOCATION_TYPE_PINNED || host_with_handle_types(prop)) return CUDA_ERROR_INVALID_VALUE;
    const int attr = location_attribute(prop.location.type);
    if (attr == 0) return CUDA_ERROR_INVALID_VALUE;
    if (is_localized(prop.location)) {
        if (const CUresult r = check_localized(prop.location); r != CUDA_SUCCESS) return r;
        // Where GPUDirect RDMA does not work with localized memory, an RDMA-capable localized
        // allocation needs the RDMA-over-PCIe usage (TensorRT-LLM sets it then).
        const Device* d = device(location_device(prop.location));
        const auto rdma = d->attrs.find(kAttrRdmaWithLocalized);
        if (prop.allocFlags.gpuDirectRDMACapable != 0 && (rdma == d->attrs.end() || rdma->second == 0) &&
            (prop.allocFlags.usage & kUsageRdmaOverPcie) == 0) {
            return CUDA_ERROR_NOT_SUPPORTED;
        }
    }
    // Host locations are checked against device 0's attributes, as the driver answers for the system.
    const int dev = checked_device(prop.location);
    if (device(dev) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (!device_has(dev, attr)) return CUDA_ERROR_NOT_SUPPORTED;
    const unsigned types = prop.requestedHandleTypes;
    if ((types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) &&
        !device_has(dev, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED)) {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (types & CU_MEM_HANDLE_TYPE_FABRIC) {
        if (!device_has(dev, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED)) return CUDA_ERROR_NOT_SUPPORTED;
        if (!imex_channel_available()) return CUDA_ERROR_NOT_PERMITTED;
    }
    if (types & ~static_cast<unsigned>(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC)) {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    owner = location_device(prop.location);
    return CUDA_SUCCESS;
}

// The fabric handle names the exporting process and its memfd, so another process can open it.
void encode_fabric(const Allocation& a, CUmemFabricHandle* out) {
    std::memset(out, 0, sizeof *out);
    std::snprintf(reinterpret_cast<char*>(out->data), sizeof out->data, "fakecuda-fabric:%d:%d:%zu:%d",
                  static_cast<int>(getpid()), a.memfd, a.size, a.device);
}

void free_if_done(Allocation& a) {
    if (!a.released || a.mappings > 0) return;
    if (!a.imported) give_device_memory(a.device, a.size);
    close(a.memfd);
    allocations().erase(a.handle);
}

}  // namespace

Allocation* find_allocation(CUmemGenericAllocationHandle handle) {
    const auto it = allocations().find(handle);
    return it == allocations().end() || it->second.released ? nullptr : &it->second;
}

Allocation* allocation_at(CUdeviceptr ptr, std::size_t* offset) {
    const auto p = static_cast<std::uintptr_t>(ptr);
    auto it = mappings().upper_bound(p);
    if (it == mappings().begin()) return nullptr;
    --it;
    if (p >= it->first + it->second.size) return nullptr;
    const auto a = allocations().find(it->second.handle);
    if (a == allocations().end()) return nullptr;
    if (offset != nullptr) *offset = it->second.offset + (p - it->first);
    return &a->second;
}

const Reservation* reservation_at(CUdeviceptr ptr) {
    const auto p = static_cast<std::uintptr_t>(ptr);
    auto it = reservations().upper_bound(p);
    if (it == reservations().begin()) return nullptr;
    --it;
    return p < it->second.base + it->second.size ? &it->second : nullptr;
}

std::vector<std::string> memory_leaks() {
    std::vector<std::string> left;
    if (!allocations().empty())
        left.push_back(std::to_string(allocations().size()) +
                       " allocations still held (not released, or released and still mapped)");
    if (!reservations().empty()) left.push_back(std::to_string(reservations().size()) + " address ranges not freed");
    return left;
}

bool valid_device_range(CUdeviceptr ptr, std::size_t size, int device) {
    const auto p = static_cast<std::uintptr_t>(ptr);
    if (valid_linear_range(p, size, device)) return true;
    const AccessMask wanted = device < 0 ? kAllDevices : device_bit(device);
    // Walk the mappings that cover [p, p + size): each must be accessible to the device and contiguous.
    auto it = mappings().upper_bound(p);
    if (it == mappings().begin()) return false;
    --it;
    std::uintptr_t cursor = p;
    while (cursor < p + size) {
        if (it == mappings().end() || it->first > cursor || (it->second.access & wanted) == 0) return false;
        cursor = it->first + it->second.size;
        ++it;
    }
    return true;
}

}  // namespace fake

using fake::Allocation;

extern "C" {

CUresult cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                       CUmemAllocationGranularity_flags option) {
    FAKE_ENTRY_INIT("cuMemGetAllocationGranularity");
    if (granularity == nullptr || prop == nullptr || fake::host_with_handle_types(*prop))
        return CUDA_ERROR_INVALID_VALUE;
    std::uint64_t min = 0, rec = 0;
    const CUresult r = fake::granularity_for(*prop, min, rec);
    if (r != CUDA_SUCCESS) return r;
    *granularity = option == CU_MEM_ALLOC_GRANULARITY_RECOMMENDED ? rec : min;
    return CUDA_SUCCESS;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                     unsigned long long flags) {
    FAKE_ENTRY_INIT("cuMemCreate");
    if (prop != nullptr) fake::count_variant("cuMemCreate", prop->location.type);
    if (handle == nullptr || prop == nullptr || flags != 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    int owner = -1;
    if (const CUresult r = fake::check_prop(*prop, owner); r != CUDA_SUCCESS) return r;
    std::uint64_t min = 0, rec = 0;
    if (const CUresult r = fake::granularity_for(*prop, min, rec); r != CUDA_SUCCESS) return r;
    if (min == 0 || size % min != 0) return CUDA_ERROR_INVALID_VALUE;
    if (!fake::take_device_memory(owner, size)) return CUDA_ERROR_OUT_OF_MEMORY;
    Allocation a;
    a.prop = *prop;
    a.prop.location = fake::granted_location(prop->location);
    // As measured on an H200 (driver 580.159.04): a host allocation is granted on the host NUMA node
    // closest to the GPU, and the driver reports it as CU_MEM_LOCATION_TYPE_HOST_NUMA with that id.
    if (prop->location.type == CU_MEM_LOCATION_TYPE_HOST) {
        const fake::Device* d0 = fake::device(0);
        const auto numa = d0->attrs.find(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
        if (numa != d0->attrs.end() && numa->second >= 0) {
            a.prop.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
            a.prop.location.id = numa->second;
        }
    }
    if (prop->allocFlags.compressionType == CU_MEM_ALLOCATION_COMP_GENERIC &&
        !fake::device_has(owner < 0 ? 0 : owner, CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED)) {
        a.prop.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_NONE;  // asked, not granted
    }
    a.size = size;
    a.device = owner;
    a.memfd = memfd_create("fakecuda", MFD_CLOEXEC);
    if (a.memfd < 0 || ftruncate(a.memfd, static_cast<off_t>(size)) != 0) {
        if (a.memfd >= 0) close(a.memfd);
        fake::give_device_memory(owner, size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    a.handle = fake::next_handle++;
    *handle = a.handle;
    fake::allocations()[a.handle] = a;
    return CUDA_SUCCESS;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
    FAKE_ENTRY_INIT("cuMemRelease");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    Allocation* a = fake::find_allocation(handle);
    if (a == nullptr) return CUDA_ERROR_INVALID_VALUE;
    a->released = true;
    fake::free_if_done(*a);
    return CUDA_SUCCESS;
}

CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop, CUmemGenericAllocationHandle handle) {
    FAKE_ENTRY_INIT("cuMemGetAllocationPropertiesFromHandle");
    if (prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const Allocation* a = fake::find_allocation(handle);
    if (a == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *prop = a->prop;
    return CUDA_SUCCESS;
}

CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags) {
    FAKE_ENTRY_INIT("cuMemAddressReserve");
    (void)addr;
    if (ptr == nullptr || size == 0 || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    // Aligned as asked (0: the 2 MiB granularity), as the driver's ranges are: a range of `align` more,
    // trimmed at both ends (mmap itself only aligns to pages, under qemu-user always).
    const std::size_t align = alignment != 0 ? alignment : std::size_t{2} << 20;
    if ((align & (align - 1)) != 0) return CUDA_ERROR_INVALID_VALUE;
    void* whole = mmap(nullptr, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (whole == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    const auto start = reinterpret_cast<std::uintptr_t>(whole);
    const std::uintptr_t aligned = (start + align - 1) & ~(align - 1);
    if (aligned > start) munmap(whole, aligned - start);
    if (aligned + size < start + size + align) {
        munmap(reinterpret_cast<void*>(aligned + size), start + size + align - (aligned + size));
    }
    void* p = reinterpret_cast<void*>(aligned);
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    fake::reservations()[reinterpret_cast<std::uintptr_t>(p)] = {reinterpret_cast<std::uintptr_t>(p), size};
    *ptr = reinterpret_cast<CUdeviceptr>(p);
    return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
    FAKE_ENTRY_INIT("cuMemAddressFree");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const auto it = fake::reservations().find(static_cast<std::uintptr_t>(ptr));
    if (it == fake::reservations().end() || it->second.size != size) return CUDA_ERROR_INVALID_VALUE;
    // Freeing a range that still has mappings is an error.
    const auto m = fake::mappings().lower_bound(it->first);
    if (m != fake::mappings().end() && m->first < it->first + size) return CUDA_ERROR_INVALID_VALUE;
    munmap(reinterpret_cast<void*>(ptr), size);
    fake::reservations().erase(it);
    return CUDA_SUCCESS;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags) {
    FAKE_ENTRY_INIT("cuMemMap");
    if (flags != 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    Allocation* a = fake::find_allocation(handle);
    if (a == nullptr || offset + size > a->size) return CUDA_ERROR_INVALID_VALUE;
    const auto p = static_cast<std::uintptr_t>(ptr);
    auto r = fake::reservations().upper_bound(p);
    if (r == fake::reservations().begin()) return CUDA_ERROR_INVALID_VALUE;
    --r;
    if (p + size > r->first + r->second.size) return CUDA_ERROR_INVALID_VALUE;
    auto m = fake::mappings().upper_bound(p);
    if (m != fake::mappings().end() && m->first < p + size) return CUDA_ERROR_ALREADY_MAPPED;
    if (m != fake::mappings().begin() && std::prev(m)->first + std::prev(m)->second.size > p) {
        return CUDA_ERROR_ALREADY_MAPPED;
    }
    void* at =
        mmap(reinterpret_cast<void*>(p), size, PROT_NONE, MAP_SHARED | MAP_FIXED, a->memfd, static_cast<off_t>(offset));
    if (at == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    fake::mappings()[p] = {size, handle, 0, offset};
    ++a->mappings;
    return CUDA_SUCCESS;
}

// Several descriptors set several devices' access; a device other than the memory's own needs peer
// access to it (cuDeviceCanAccessPeer), else CUDA_ERROR_INVALID_DEVICE; host memory takes any device.
CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) {
    FAKE_ENTRY_INIT("cuMemSetAccess");
    if (desc == nullptr || count == 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const auto p = static_cast<std::uintptr_t>(ptr);
    for (size_t i = 0; i < count; ++i) {
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || fake::device(desc[i].location.id) == nullptr) {
            return CUDA_ERROR_INVALID_DEVICE;
        }
    }
    // Every byte of the range must be mapped.
    std::uintptr_t cursor = p;
    auto m = fake::mappings().find(p);
    while (cursor < p + size) {
        if (m == fake::mappings().end() || m->first != cursor) return CUDA_ERROR_INVALID_VALUE;
        const Allocation& a = fake::allocations().at(m->second.handle);
        const int owner = fake::location_device(a.prop.location);
        for (size_t i = 0; i < count; ++i) {
            const int to = desc[i].location.id;
            if (owner >= 0 && to != owner && desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
                !fake::can_access_peer(to, owner)) {
                return CUDA_ERROR_INVALID_DEVICE;
            }
        }
        cursor += m->second.size;
        ++m;
    }
    for (m = fake::mappings().find(p); m != fake::mappings().end() && m->first < p + size; ++m) {
        for (size_t i = 0; i < count; ++i) {
            const fake::AccessMask bit = fake::device_bit(desc[i].location.id);
            if (desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
                m->second.access |= bit;
            } else {
                m->second.access &= ~bit;
            }
        }
        mprotect(reinterpret_cast<void*>(m->first), m->second.size,
                 m->second.access != 0 ? PROT_READ | PROT_WRITE : PROT_READ);
    }
    return CUDA_SUCCESS;
}

// The access a device has to the mapping at ptr.
CUresult cuMemGetAccess(unsigned long long* flags, const CUmemLocation* location, CUdeviceptr ptr) {
    FAKE_ENTRY_INIT("cuMemGetAccess");
    if (flags == nullptr || location == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (location->type != CU_MEM_LOCATION_TYPE_DEVICE || fake::device(location->id) == nullptr) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const auto p = static_cast<std::uintptr_t>(ptr);
    auto it = fake::mappings().upper_bound(p);
    if (it == fake::mappings().begin()) return CUDA_ERROR_INVALID_VALUE;
    --it;
    if (p >= it->first + it->second.size) return CUDA_ERROR_INVALID_VALUE;
    *flags = (it->second.access & fake::device_bit(location->id)) != 0 ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                                                                       : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    return CUDA_SUCCESS;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
    FAKE_ENTRY_INIT("cuMemUnmap");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const auto p = static_cast<std::uintptr_t>(ptr);
    auto m = fake::mappings().find(p);
    if (m == fake::mappings().end()) return CUDA_ERROR_INVALID_VALUE;
    std::uintptr_t cursor = p;
    while (cursor < p + size && m != fake::mappings().end() && m->first == cursor) {
        cursor += m->second.size;
        mmap(reinterpret_cast<void*>(m->first), m->second.size, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        auto it = fake::allocations().find(m->second.handle);
        m = fake::mappings().erase(m);
        if (it != fake::allocations().end()) {
            --it->second.mappings;
            fake::free_if_done(it->second);
        }
    }
    return cursor == p + size ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemExportToShareableHandle(void* shareable, CUmemGenericAllocationHandle handle,
                                      CUmemAllocationHandleType type, unsigned long long flags) {
    FAKE_ENTRY_INIT("cuMemExportToShareableHandle");
    if (shareable == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const Allocation* a = fake::find_allocation(handle);
    if (a == nullptr || (a->prop.requestedHandleTypes & type) == 0) return CUDA_ERROR_INVALID_VALUE;
    if (type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
        const int fd = fcntl(a->memfd, F_DUPFD_CLOEXEC, 0);
        if (fd < 0) return CUDA_ERROR_OPERATING_SYSTEM;
        *static_cast<int*>(shareable) = fd;
        return CUDA_SUCCESS;
    }
    if (type == CU_MEM_HANDLE_TYPE_FABRIC) {
        if (!fake::imex_channel_available()) return CUDA_ERROR_NOT_PERMITTED;
        fake::encode_fabric(*a, static_cast<CUmemFabricHandle*>(shareable));
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* os_handle,
                                        CUmemAllocationHandleType type) {
    FAKE_ENTRY_INIT("cuMemImportFromShareableHandle");
    if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
    int fd = -1;
    int owner = -1;
    if (type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
        fd = fcntl(static_cast<int>(reinterpret_cast<std::intptr_t>(os_handle)), F_DUPFD_CLOEXEC, 0);
        if (fd < 0) return CUDA_ERROR_INVALID_VALUE;
    } else if (type == CU_MEM_HANDLE_TYPE_FABRIC) {
        if (os_handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
        if (!fake::imex_channel_available()) return CUDA_ERROR_NOT_PERMITTED;
        int pid = 0, remote_fd = 0;
        size_t size = 0;
        if (std::sscanf(static_cast<const char*>(os_handle), "fakecuda-fabric:%d:%d:%zu:%d", &pid, &remote_fd, &size,
                        &owner) != 4) {
            return CUDA_ERROR_INVALID_VALUE;
        }
        const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(remote_fd);
        fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) return CUDA_ERROR_INVALID_VALUE;
    } else {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || st.st_size <= 0) {
        close(fd);
        return CUDA_ERROR_INVALID_VALUE;
    }
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    Allocation a;
    a.prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    a.prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    a.prop.location.id = owner < 0 ? 0 : owner;
    a.prop.requestedHandleTypes = type;
    a.size = static_cast<std::size_t>(st.st_size);
    a.memfd = fd;
    a.imported = true;
    a.handle = fake::next_handle++;
    *handle = a.handle;
    fake::allocations()[a.handle] = a;
    return CUDA_SUCCESS;
}

}  // extern "C"
