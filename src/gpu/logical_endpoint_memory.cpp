#include "gpu/logical_endpoint_memory.hpp"

#include <fmt/format.h>

#include "gpu/memory_props.hpp"
#include "util/size.hpp"

namespace cumemctl {

LeMemory::Created::Created(StepLog& l, const CUmemAllocationProp& prop, std::uint64_t size, int device) : log(l) {
    log.call(fmt::format("create memory for device {}", device), "cuMemCreate", log.api().cuMemCreate, &handle,
             static_cast<size_t>(size), &prop, 0ULL)
        .detail = fmt::format("{} of {} memory, handle types {}", format_size(size), location_name(prop.location),
                              handle_type_name(prop.requestedHandleTypes));
}

LeMemory::Created::~Created() {
    log.undo("release memory", "cuMemRelease", log.api().cuMemRelease, handle);
}

LeMemory::Range::Range(StepLog& l, std::uint64_t bytes, std::uint64_t alignment) : log(l), size(bytes) {
    log.call("reserve address range", "cuMemAddressReserve", log.api().cuMemAddressReserve, &ptr,
             static_cast<size_t>(bytes), static_cast<size_t>(alignment), CUdeviceptr{0}, 0ULL)
        .detail = fmt::format("{} aligned to {}", format_size(bytes), format_size(alignment));
}

LeMemory::Range::~Range() {
    log.undo("free address range", "cuMemAddressFree", log.api().cuMemAddressFree, ptr, static_cast<size_t>(size));
}

LeMemory::Mapped::Mapped(StepLog& l, CUdeviceptr p, std::uint64_t bytes, CUmemGenericAllocationHandle handle,
                         int device)
    : log(l), ptr(p), size(bytes) {
    log.call("map memory", "cuMemMap", log.api().cuMemMap, ptr, static_cast<size_t>(bytes), size_t{0}, handle, 0ULL);
    // The mapping exists from here on, but this object's destructor runs only once the constructor has
    // returned: a failure below must unmap here.
    try {
        CUmemAccessDesc access{};
        access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        access.location.id = device;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        log.call(fmt::format("make memory read-write for device {}", device), "cuMemSetAccess",
                 log.api().cuMemSetAccess, ptr, static_cast<size_t>(bytes), &access, size_t{1});
    } catch (...) {
        log.undo("unmap memory", "cuMemUnmap", log.api().cuMemUnmap, ptr, static_cast<size_t>(size));
        throw;
    }
}

LeMemory::Mapped::~Mapped() {
    log.undo("unmap memory", "cuMemUnmap", log.api().cuMemUnmap, ptr, static_cast<size_t>(size));
}

LeMemory::LeMemory(StepLog& log, const CUmemAllocationProp& prop, std::uint64_t size, int device, bool map,
                   std::uint64_t alignment)
    : prop_(prop), size_(size), device_(device) {
    created_.emplace(log, prop, size, device);
    if (!map) return;
    range_.emplace(log, size, alignment);
    if (range_->ptr % alignment != 0) {
        throw Error(ExitCode::failed,
                    fmt::format("cuMemAddressReserve returned 0x{:x}, which is not aligned to the bind alignment {}",
                                range_->ptr, format_size(alignment)),
                    "this is a driver problem; bind by handle instead (leave out --by-address)");
    }
    mapped_.emplace(log, range_->ptr, size, created_->handle, device);
}

}  // namespace cumemctl
