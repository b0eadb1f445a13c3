// Exporting an allocation as a shareable handle and importing it in another process: a POSIX file
// descriptor, or the 64 bytes of a fabric handle.
#pragma once

#include <string>

#include "cuda/driver_api.hpp"
#include "gpu/vmm/vmm_resources.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl::gpu {

// An exported handle. The descriptor is owned: closed when the handle goes.
struct ExportedHandle {
    CUmemAllocationHandleType type = CU_MEM_HANDLE_TYPE_NONE;
    UniqueFd fd;                 // posix-fd
    CUmemFabricHandle fabric{};  // fabric

    // The fabric handle's 64 bytes as 128 lowercase hex digits.
    std::string fabric_hex() const;
};

// cuMemExportToShareableHandle of `handle` as `type` (posix-fd or fabric); a descriptor is made
// close-on-exec. Throws Error (undiagnosed).
ExportedHandle export_handle(const DriverApi& api, CUmemGenericAllocationHandle handle, CUmemAllocationHandleType type);

// cuMemImportFromShareableHandle: a descriptor (posix-fd; the caller still owns and closes it) or the
// fabric handle's bytes. Throws Error (undiagnosed).
AllocationHandle import_posix_fd(const DriverApi& api, int fd);
AllocationHandle import_fabric(const DriverApi& api, const CUmemFabricHandle& fabric);

}  // namespace cumemctl::gpu
