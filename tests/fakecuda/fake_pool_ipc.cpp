// The fake driver's pool IPC: a pool exported as its arena's memfd (POSIX fd) or as a fabric handle
// naming the exporting process and memfd (only with an IMEX channel, as the driver requires);
// pointers exported as their arena offset and size, so that an importer that maps the same memfd
// finds the same bytes (it maps each imported pointer's range alone). Imported pools answer no
// statistics and cannot allocate.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "fake_locality.hpp"
#include "fake_memory.hpp"
#include "fake_pools.hpp"

namespace fake {
namespace {

constexpr char kPointerMagic[8] = {'f', 'a', 'k', 'e', 'p', 'o', 'o', 'l'};

// What CUmemPoolPtrExportData carries: the allocation's place in the arena.
struct PointerExport {
    char magic[8];
    std::uint64_t offset;
    std::uint64_t size;
    std::uint64_t pool;  // the exporter's pool handle, and its pid: the import's mark (fake_pools.hpp)
    std::int32_t exporter_pid;
};
static_assert(sizeof(PointerExport) <= sizeof(CUmemPoolPtrExportData));

// An exported arena (an fd this function owns) as an imported pool.
CUresult import_arena(int fd, int device, CUmemoryPool* out) {
    struct stat st {};
    if (fstat(fd, &st) != 0 || st.st_size <= 0) {
        close(fd);
        return CUDA_ERROR_INVALID_VALUE;
    }
    std::lock_guard<std::mutex> lock(state().mutex);
    Pool p;
    p.imported = true;
    p.access = 0;
    p.memfd = fd;
    p.arena = static_cast<std::uint64_t>(st.st_size);
    p.props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.props.location = {CU_MEM_LOCATION_TYPE_DEVICE, device < 0 ? 0 : device};
    *out = add_pool(std::move(p)).handle;
    return CUDA_SUCCESS;
}

}  // namespace
}  // namespace fake

using fake::Pool;

extern "C" {

CUresult cuMemPoolExportToShareableHandle(void* handle, CUmemoryPool pool, CUmemAllocationHandleType type,
                                          unsigned long long flags) {
    FAKE_ENTRY_INIT("cuMemPoolExportToShareableHandle");
    if (handle == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    Pool* p = fake::find_pool(pool);
    if (p == nullptr || p->imported || (p->props.handleTypes & type) == 0) return CUDA_ERROR_INVALID_VALUE;
    if (type == CU_MEM_HANDLE_TYPE_FABRIC && !fake::imex_channel_available()) return CUDA_ERROR_NOT_PERMITTED;
    if (!fake::ensure_arena(*p)) return CUDA_ERROR_OUT_OF_MEMORY;
    if (type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
        const int fd = fcntl(p->memfd, F_DUPFD_CLOEXEC, 0);
        if (fd < 0) return CUDA_ERROR_OPERATING_SYSTEM;
        *static_cast<int*>(handle) = fd;
        p->exported = true;
        return CUDA_SUCCESS;
    }
    if (type == CU_MEM_HANDLE_TYPE_FABRIC) {
        p->exported = true;
        auto* out = static_cast<CUmemFabricHandle*>(handle);
        std::memset(out, 0, sizeof *out);
        std::snprintf(reinterpret_cast<char*>(out->data), sizeof out->data, "fakecuda-pool:%d:%d:%d",
                      static_cast<int>(getpid()), p->memfd, p->device);
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemPoolImportFromShareableHandle(CUmemoryPool* pool, void* handle, CUmemAllocationHandleType type,
                                            unsigned long long flags) {
    FAKE_ENTRY_INIT("cuMemPoolImportFromShareableHandle");
    if (pool == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
        const int fd = fcntl(static_cast<int>(reinterpret_cast<std::intptr_t>(handle)), F_DUPFD_CLOEXEC, 0);
        if (fd < 0) return CUDA_ERROR_INVALID_VALUE;
        return fake::import_arena(fd, -1, pool);
    }
    if (type == CU_MEM_HANDLE_TYPE_FABRIC) {
        if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
        if (!fake::imex_channel_available()) return CUDA_ERROR_NOT_PERMITTED;
        int pid = 0, remote_fd = 0, device = 0;
        if (std::sscanf(static_cast<const char*>(handle), "fakecuda-pool:%d:%d:%d", &pid, &remote_fd, &device) != 3) {
            return CUDA_ERROR_INVALID_VALUE;
        }
        const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(remote_fd);
        const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) return CUDA_ERROR_INVALID_VALUE;
        return fake::import_arena(fd, device, pool);
    }
    return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData* data, CUdeviceptr ptr) {
    FAKE_ENTRY_INIT("cuMemPoolExportPointer");
    if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    Pool* p = fake::pool_of_block(ptr);
    if (p == nullptr || p->imported || !p->exported) return CUDA_ERROR_INVALID_VALUE;
    const fake::PoolBlock& block = p->blocks.at(ptr);
    fake::PointerExport e{};
    std::memcpy(e.magic, fake::kPointerMagic, sizeof e.magic);
    e.offset = block.slab;
    e.size = block.size;
    e.pool = reinterpret_cast<std::uintptr_t>(p->handle);
    e.exporter_pid = static_cast<std::int32_t>(getpid());
    std::memset(data, 0, sizeof *data);
    std::memcpy(data->reserved, &e, sizeof e);
    return CUDA_SUCCESS;
}

CUresult cuMemPoolImportPointer(CUdeviceptr* ptr, CUmemoryPool pool, CUmemPoolPtrExportData* data) {
    FAKE_ENTRY_INIT("cuMemPoolImportPointer");
    if (ptr == nullptr || data == nullptr) return CUDA_ERROR_INVALID_VALUE;
    fake::PointerExport e{};
    std::memcpy(&e, data->reserved, sizeof e);
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    Pool* p = fake::find_pool(pool);
    if (p == nullptr || !p->imported || std::memcmp(e.magic, fake::kPointerMagic, sizeof e.magic) != 0 || e.size == 0 ||
        e.offset + e.size > p->arena) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    for (const auto& [addr, block] : p->blocks) {
        if (block.slab == e.offset) return CUDA_ERROR_INVALID_VALUE;  // imported already
    }
    const std::uintptr_t at = fake::map_arena(*p, e.offset, e.size);
    if (at == 0) return CUDA_ERROR_OUT_OF_MEMORY;
    const std::string mark = fake::import_marks_dir() + "/" +
                             fake::import_mark_name(e.exporter_pid, e.pool, e.offset, static_cast<int>(getpid()));
    if (const int fd = ::open(mark.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600); fd >= 0) ::close(fd);
    p->blocks[at] = fake::PoolBlock{e.size, e.offset, mark};
    fake::add_linear_block(at, e.size, p->access, fake::location_device(p->props.location));
    *ptr = at;
    return CUDA_SUCCESS;
}

// Access is per pool and per device: an imported pool's blocks become device-accessible once the
// importer grants read-write access, as NVIDIA's IPC sample does after checking cuMemPoolGetAccess; a
// device pool's blocks become accessible to another device granted read-write access, which needs peer
// access to the pool's device (else CUDA_ERROR_INVALID_DEVICE). The fake refuses (CUDA_ERROR_INVALID_VALUE)
// taking read-write access away from a pool's own device.
CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc* map, size_t count) {
    FAKE_ENTRY_INIT("cuMemPoolSetAccess");
    if (map == nullptr || count == 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    Pool* p = fake::find_pool(pool);
    if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const int owner = fake::location_device(p->props.location);
    for (size_t i = 0; i < count; ++i) {
        const int to = map[i].location.id;
        if (map[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || fake::device(to) == nullptr) {
            return CUDA_ERROR_INVALID_DEVICE;
        }
        const bool rw = map[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        if (!p->imported && to == owner && !rw) return CUDA_ERROR_INVALID_VALUE;
        if (owner >= 0 && to != owner && rw && !fake::can_access_peer(to, owner)) return CUDA_ERROR_INVALID_DEVICE;
    }
    for (size_t i = 0; i < count; ++i) {
        const fake::AccessMask bit = fake::device_bit(map[i].location.id);
        if (p->access == fake::kAllDevices) p->access = 0;  // a host pool's grants become explicit
        p->access = map[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? p->access | bit : p->access & ~bit;
    }
    for (const auto& [at, block] : p->blocks)
        fake::add_linear_block(at, block.size, p->access, fake::location_device(p->props.location));
    return CUDA_SUCCESS;
}

CUresult cuMemPoolGetAccess(CUmemAccess_flags* flags, CUmemoryPool pool, CUmemLocation* location) {
    FAKE_ENTRY_INIT("cuMemPoolGetAccess");
    if (flags == nullptr || location == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const Pool* p = fake::find_pool(pool);
    if (p == nullptr || location->type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
    if (fake::device(location->id) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    *flags = (p->access & fake::device_bit(location->id)) != 0 ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                                                               : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    return CUDA_SUCCESS;
}

}  // extern "C"
