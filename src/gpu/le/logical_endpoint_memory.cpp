#include "gpu/le/logical_endpoint_memory.hpp"

#include <fmt/format.h>

#include "gpu/device/memory_props.hpp"
#include "base/setting.hpp"
#include "util/size.hpp"

namespace cumemctl::gpu {

LeMemory::LeMemory(StepLog& log, const CUmemAllocationProp& prop, std::uint64_t size, int device, bool map,
                   std::uint64_t alignment)
    : prop_(prop),
      size_(size),
      device_(device),
      created_([&log](CUmemGenericAllocationHandle h) {
          log.undo("release memory", "cuMemRelease", log.api().cuMemRelease, h);
          return CUDA_SUCCESS;  // a failed undo is kept in the log
      }),
      range_([&log, size](CUdeviceptr p) {
          log.undo("free address range", "cuMemAddressFree", log.api().cuMemAddressFree, p, static_cast<size_t>(size));
          return CUDA_SUCCESS;
      }),
      mapped_([&log, size](CUdeviceptr p) {
          log.undo("unmap memory", "cuMemUnmap", log.api().cuMemUnmap, p, static_cast<size_t>(size));
          return CUDA_SUCCESS;
      }) {
    CUmemGenericAllocationHandle handle = 0;
    log.call(fmt::format("create memory for device {}", device), "cuMemCreate", log.api().cuMemCreate, &handle,
             static_cast<size_t>(size), &prop, 0ULL)
        .detail = fmt::format("{} of {} memory, handle types {}", format_size(size), location_name(prop.location),
                              handle_type_name(prop.requestedHandleTypes));
    created_.reset(handle);
    if (!map) return;
    CUdeviceptr ptr = 0;
    log.call("reserve address range", "cuMemAddressReserve", log.api().cuMemAddressReserve, &ptr,
             static_cast<size_t>(size), static_cast<size_t>(alignment), CUdeviceptr{0}, 0ULL)
        .detail = fmt::format("{} aligned to {}", format_size(size), format_size(alignment));
    range_.reset(ptr);
    if (ptr % alignment != 0) {
        throw Error(Problem{
            .exit_code = ExitCode::failed,
            .message = fmt::format("cuMemAddressReserve returned 0x{:x}, which is not aligned to the bind alignment {}",
                                   ptr, format_size(alignment)),
            .remedy = fmt::format("this is a driver problem; bind by handle instead (leave out {})",
                                  setting_name(Setting::by_address))});
    }
    log.call("map memory", "cuMemMap", log.api().cuMemMap, ptr, static_cast<size_t>(size), size_t{0}, handle, 0ULL);
    mapped_.reset(ptr);  // from here on a failure unmaps
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    log.call(fmt::format("make memory read-write for device {}", device), "cuMemSetAccess", log.api().cuMemSetAccess,
             ptr, static_cast<size_t>(size), &access, size_t{1});
}

}  // namespace cumemctl::gpu
