#include "gpu/vmm/shareable_handle.hpp"

#include <fcntl.h>

#include <cstdint>

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "base/error.hpp"
#include "ipc/hex.hpp"

namespace cumemctl::gpu {

std::string ExportedHandle::fabric_hex() const {
    return ipc::to_hex(fabric.data, sizeof fabric.data);
}

ExportedHandle export_handle(const DriverApi& api, CUmemGenericAllocationHandle handle,
                             CUmemAllocationHandleType type) {
    ExportedHandle out;
    out.type = type;
    if (type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
        int fd = -1;
        CU_CALL(api, cuMemExportToShareableHandle, &fd, handle, type, 0);
        out.fd.reset(fd);
        // Only the socket hands it on: a process started later must not inherit it.
        fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
    } else if (type == CU_MEM_HANDLE_TYPE_FABRIC) {
        CU_CALL(api, cuMemExportToShareableHandle, &out.fabric, handle, type, 0);
    } else {
        throw Error(ExitCode::usage, "only posix-fd and fabric handles can be exported",
                    "ask for handle type posix-fd or fabric");
    }
    return out;
}

AllocationHandle import_posix_fd(const DriverApi& api, int fd) {
    CUmemGenericAllocationHandle handle = 0;
    // The driver takes the descriptor itself, widened to a pointer.
    void* os_handle = reinterpret_cast<void*>(static_cast<std::intptr_t>(fd));  // NOLINT(performance-no-int-to-ptr)
    CU_CALL(api, cuMemImportFromShareableHandle, &handle, os_handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    return AllocationHandle(api, handle);
}

AllocationHandle import_fabric(const DriverApi& api, const CUmemFabricHandle& fabric) {
    CUmemGenericAllocationHandle handle = 0;
    CUmemFabricHandle copy = fabric;
    CU_CALL(api, cuMemImportFromShareableHandle, &handle, &copy, CU_MEM_HANDLE_TYPE_FABRIC);
    return AllocationHandle(api, handle);
}

}  // namespace cumemctl::gpu
