// The fake driver's stream-ordered memory pools: default and current pools per location and
// allocation type, cuMemPoolCreate with the driver's checks, attributes, allocation and free in whole
// granules, release threshold at synchronisation, high-water marks and trim (see fake_pools.hpp).
#include "fake_locality.hpp"
#include "fake_pools.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <tuple>

#include "fake_context.hpp"
#include "fake_memory.hpp"

namespace fake {
namespace {

using PoolKey = std::tuple<int, int, int>;  // location type, location id, allocation type

std::map<std::uintptr_t, Pool>& pools() {
    static auto* p = new std::map<std::uintptr_t, Pool>;
    return *p;
}
std::map<PoolKey, CUmemoryPool>& defaults() {
    static auto* d = new std::map<PoolKey, CUmemoryPool>;
    return *d;
}
std::map<PoolKey, CUmemoryPool>& currents() {
    static auto* c = new std::map<PoolKey, CUmemoryPool>;
    return *c;
}
std::uintptr_t next_pool = 0x70000;

// Whether some device names `node` as its host NUMA node (CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID).
bool known_numa_node(int node) {
    for (const auto& d : state().devices) {
        const auto it = d.attrs.find(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
        if (it != d.attrs.end() && it->second >= 0 && it->second == node) return true;
    }
    return false;
}

PoolKey key_of(const CUmemLocation& loc, CUmemAllocationType type) {
    const bool has_id =
        loc.type == CU_MEM_LOCATION_TYPE_DEVICE || loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA || is_localized(loc);
    return {static_cast<int>(loc.type), has_id ? loc.id : 0, static_cast<int>(type)};
}

// Checks a location and allocation type as the driver does for pools. Host locations are answered
// for the system by device 0's attributes.
CUresult check_location(const CUmemLocation& loc, CUmemAllocationType type) {
    if (type != CU_MEM_ALLOCATION_TYPE_PINNED && type != CU_MEM_ALLOCATION_TYPE_MANAGED)
        return CUDA_ERROR_INVALID_VALUE;
    const bool managed = type == CU_MEM_ALLOCATION_TYPE_MANAGED;
    if (is_localized(loc)) {
        if (managed) return CUDA_ERROR_NOT_SUPPORTED;  // managed memory is never localized
        if (const CUresult r = check_localized(loc); r != CUDA_SUCCESS) return r;
    }
    const int dev = checked_device(loc);
    if (device(dev) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (!has_attr(dev, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)) return CUDA_ERROR_NOT_SUPPORTED;
    if (managed && !has_attr(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)) return CUDA_ERROR_NOT_SUPPORTED;
    if (is_localized(loc)) return CUDA_SUCCESS;
    switch (loc.type) {
        case CU_MEM_LOCATION_TYPE_DEVICE:
            return CUDA_SUCCESS;
        case CU_MEM_LOCATION_TYPE_NONE:
            return managed ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
        case CU_MEM_LOCATION_TYPE_HOST:
            return has_attr(0, CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED) ? CUDA_SUCCESS
                                                                                : CUDA_ERROR_NOT_SUPPORTED;
        case CU_MEM_LOCATION_TYPE_HOST_NUMA:
            if (!has_attr(0, CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED)) return CUDA_ERROR_NOT_SUPPORTED;
            return known_numa_node(loc.id) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
        default:
            return CUDA_ERROR_INVALID_VALUE;
    }
}

// The granule a pool reserves in: the location's minimum granularity (2 MiB where unknown).
std::uint64_t granule_for(const CUmemLocation& loc) {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location = loc;
    std::uint64_t min = 0, rec = 0;
    if (loc.type == CU_MEM_LOCATION_TYPE_NONE || granularity_for(prop, min, rec) != CUDA_SUCCESS || min == 0) {
        return 2u << 20;
    }
    return min;
}

Pool new_pool(const CUmemPoolProps& props) {
    Pool p;
    p.props = props;
    p.props.location = granted_location(props.location);
    p.device = location_device(props.location);
    if (p.device >= 0) p.access = device_bit(p.device);
    p.granule = granule_for(props.location);
    return p;
}

CUmemoryPool default_pool(const CUmemLocation& loc, CUmemAllocationType type) {
    const PoolKey key = key_of(loc, type);
    if (const auto it = defaults().find(key); it != defaults().end()) return it->second;
    CUmemPoolProps props{};
    props.allocType = type;
    props.location = loc;
    Pool p = new_pool(props);
    p.is_default = true;
    const CUmemoryPool handle = add_pool(std::move(p)).handle;
    defaults()[key] = handle;
    return handle;
}

CUmemoryPool current_pool(const CUmemLocation& loc, CUmemAllocationType type) {
    if (const auto it = currents().find(key_of(loc, type)); it != currents().end()) return it->second;
    return default_pool(loc, type);
}

// Releases free slabs, highest first, while the pool holds more than `limit`.
void release_down_to(Pool& p, std::uint64_t limit) {
    auto it = p.slabs.end();
    while (p.reserved > limit && it != p.slabs.begin()) {
        --it;
        if (it->second.in_use) continue;
        const std::uint64_t offset = it->first, size = it->second.size;
        munmap(reinterpret_cast<void*>(it->second.addr), size);
        fallocate(p.memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                  static_cast<off_t>(size));
        p.reserved -= size;
        give_device_memory(p.device, size);
        p.holes[offset] = size;
        it = p.slabs.erase(it);
    }
}

// An arena range of `size` bytes: the first hole that fits, else fresh space; false when full.
bool carve(Pool& p, std::uint64_t size, std::uint64_t& offset) {
    for (auto it = p.holes.begin(); it != p.holes.end(); ++it) {
        if (it->second < size) continue;
        offset = it->first;
        const std::uint64_t left = it->second - size;
        p.holes.erase(it);
        if (left > 0) p.holes[offset + size] = left;
        return true;
    }
    if (p.top + size > p.arena) return false;
    offset = p.top;
    p.top += size;
    return true;
}

// A slab for `need` bytes: the smallest free one that fits (split when larger), else a new one.
CUresult take_slab(Pool& p, std::uint64_t need, std::uint64_t& offset) {
    auto best = p.slabs.end();
    for (auto it = p.slabs.begin(); it != p.slabs.end(); ++it) {
        if (!it->second.in_use && it->second.size >= need &&
            (best == p.slabs.end() || it->second.size < best->second.size)) {
            best = it;
        }
    }
    if (best != p.slabs.end()) {
        if (best->second.size > need) {
            p.slabs[best->first + need] = Slab{best->second.size - need, false, best->second.addr + need};
        }
        best->second.size = need;
        offset = best->first;
        return CUDA_SUCCESS;
    }
    if (p.props.maxSize != 0 && p.reserved + need > p.props.maxSize) return CUDA_ERROR_OUT_OF_MEMORY;
    if (!ensure_arena(p) || !take_device_memory(p.device, need)) return CUDA_ERROR_OUT_OF_MEMORY;
    if (!carve(p, need, offset)) {
        give_device_memory(p.device, need);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    const std::uintptr_t addr = map_arena(p, offset, need);
    if (addr == 0) {
        give_device_memory(p.device, need);
        p.holes[offset] = need;
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    p.slabs[offset] = Slab{need, false, addr};
    p.reserved += need;
    p.reserved_high = std::max(p.reserved_high, p.reserved);
    return CUDA_SUCCESS;
}

CUresult allocate(Pool& p, std::size_t size, CUdeviceptr* dptr) {
    if (p.imported || dptr == nullptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
    const std::uint64_t need = (size + p.granule - 1) / p.granule * p.granule;
    std::uint64_t offset = 0;
    if (const CUresult r = take_slab(p, need, offset); r != CUDA_SUCCESS) return r;
    p.slabs[offset].in_use = true;
    const std::uintptr_t ptr = p.slabs[offset].addr;
    p.blocks[ptr] = PoolBlock{size, offset, {}};
    p.used += size;
    p.used_high = std::max(p.used_high, p.used);
    add_linear_block(ptr, size, p.access, location_device(p.props.location));
    *dptr = ptr;
    return CUDA_SUCCESS;
}

// Frees one of the pool's own allocations (not an import).
void free_block(Pool& p, std::map<std::uintptr_t, PoolBlock>::iterator block) {
    if (p.props.handleTypes != CU_MEM_HANDLE_TYPE_NONE)
        check_imports_before_free(reinterpret_cast<std::uintptr_t>(p.handle), block->second.slab);
    remove_linear_block(block->first);
    p.slabs[block->second.slab].in_use = false;
    p.used -= block->second.size;
    p.blocks.erase(block);
}

std::uint64_t& u64_attribute(Pool& p, CUmemPool_attribute attr, bool& ok) {
    ok = true;
    switch (attr) {
        case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
            return p.threshold;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
            return p.reserved;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
            return p.reserved_high;
        case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
            return p.used;
        case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
            return p.used_high;
        default:
            ok = false;
            return p.threshold;
    }
}

}  // namespace

std::vector<std::string> pool_leaks() {
    std::vector<std::string> left;
    char line[160];
    for (const auto& [id, p] : pools()) {
        if (!p.is_default && !p.destroyed) {
            std::snprintf(line, sizeof line, "pool %#lx not destroyed", id);
            left.emplace_back(line);
        }
        if (!p.blocks.empty()) {
            std::snprintf(line, sizeof line, "%zu %s of pool %#lx not freed", p.blocks.size(),
                          p.imported ? "imported pointers" : "allocations", id);
            left.emplace_back(line);
        }
    }
    return left;
}

Pool* find_pool(CUmemoryPool handle) {
    const auto it = pools().find(reinterpret_cast<std::uintptr_t>(handle));
    return it == pools().end() || it->second.destroyed ? nullptr : &it->second;
}

Pool& add_pool(Pool pool) {
    const std::uintptr_t id = next_pool;
    next_pool += 0x10;
    pool.handle = reinterpret_cast<CUmemoryPool>(id);
    return pools()[id] = std::move(pool);
}

bool ensure_arena(Pool& p) {
    if (p.memfd >= 0) return true;
    if (p.arena == 0) {
        const Device* d = device(p.device);
        const std::uint64_t span = p.props.maxSize != 0 ? p.props.maxSize : d != nullptr ? d->total : 1ULL << 40;
        p.arena = (span + p.granule - 1) / p.granule * p.granule;
    }
    p.memfd = memfd_create("fakecuda-pool", MFD_CLOEXEC);
    if (p.memfd >= 0 && ftruncate(p.memfd, static_cast<off_t>(p.arena)) == 0) return true;
    if (p.memfd >= 0) close(p.memfd);
    p.memfd = -1;
    return false;
}

std::uintptr_t map_arena(const Pool& p, std::uint64_t offset, std::uint64_t size) {
    void* at =
        mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, p.memfd, static_cast<off_t>(offset));
    return at == MAP_FAILED ? 0 : reinterpret_cast<std::uintptr_t>(at);
}

void drop_if_done(Pool& p) {
    if (!p.destroyed || !p.blocks.empty()) return;
    if (!p.imported) release_down_to(p, 0);
    if (p.memfd >= 0) close(p.memfd);
    pools().erase(reinterpret_cast<std::uintptr_t>(p.handle));
}

Pool* pool_of_block(std::uintptr_t ptr) {
    for (auto& [id, p] : pools()) {
        if (p.blocks.count(ptr) != 0) return &p;
    }
    return nullptr;
}

void release_pools_at_sync() {
    for (auto& [id, p] : pools()) {
        if (!p.imported) release_down_to(p, p.threshold);
    }
}

std::string import_marks_dir() {
    const char* dir = std::getenv("FAKECUDA_IMPORT_MARKS");
    std::string path = dir != nullptr && *dir != '\0' ? dir : "/tmp/fakecuda-imports-" + std::to_string(::getuid());
    ::mkdir(path.c_str(), 0700);
    return path;
}

std::string import_mark_name(int exporter_pid, std::uintptr_t pool, std::uint64_t offset, int importer_pid) {
    return std::to_string(exporter_pid) + "-" + std::to_string(pool) + "-" + std::to_string(offset) + "-" +
           std::to_string(importer_pid);
}

namespace {
std::vector<std::string>& breaches() {
    static std::vector<std::string> seen;
    return seen;
}
}  // namespace

void check_imports_before_free(std::uintptr_t pool, std::uint64_t offset) {
    const std::string dir = import_marks_dir();
    const std::string prefix = import_mark_name(::getpid(), pool, offset, 0);
    const std::string stem = prefix.substr(0, prefix.size() - 1);  // without the importer's pid
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return;
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.rfind(stem, 0) != 0) continue;
        const int importer = std::atoi(name.c_str() + stem.size());
        if (importer <= 0 || (::kill(importer, 0) != 0 && errno == ESRCH)) {
            ::unlink((dir + "/" + name).c_str());  // a process that ended took its imports with it
            continue;
        }
        char line[200];
        std::snprintf(line, sizeof line,
                      "pool pointer at offset %llu freed by its exporter while pid %d still has it imported",
                      static_cast<unsigned long long>(offset), importer);
        std::fprintf(stderr, "fakecuda: protocol: %s (pid %d)\n", line, static_cast<int>(::getpid()));
        breaches().emplace_back(line);
    }
    ::closedir(d);
}

std::vector<std::string> protocol_breaches() {
    return breaches();
}

bool free_pool_pointer(CUdeviceptr ptr) {
    Pool* p = pool_of_block(ptr);
    if (p == nullptr) return false;
    const auto block = p->blocks.find(ptr);
    if (p->imported) {
        if (!block->second.import_mark.empty()) ::unlink(block->second.import_mark.c_str());
        remove_linear_block(ptr);
        munmap(reinterpret_cast<void*>(ptr), block->second.size);
        p->blocks.erase(block);
    } else {
        free_block(*p, block);
    }
    drop_if_done(*p);
    return true;
}

}  // namespace fake

using fake::Pool;

extern "C" {

CUresult cuMemGetDefaultMemPool(CUmemoryPool* pool, CUmemLocation* location, CUmemAllocationType type) {
    FAKE_ENTRY_INIT("cuMemGetDefaultMemPool");
    if (pool == nullptr || location == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (const CUresult r = fake::check_location(*location, type); r != CUDA_SUCCESS) return r;
    *pool = fake::default_pool(*location, type);
    return CUDA_SUCCESS;
}

CUresult cuMemGetMemPool(CUmemoryPool* pool, CUmemLocation* location, CUmemAllocationType type) {
    FAKE_ENTRY_INIT("cuMemGetMemPool");
    if (pool == nullptr || location == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (const CUresult r = fake::check_location(*location, type); r != CUDA_SUCCESS) return r;
    *pool = fake::current_pool(*location, type);
    return CUDA_SUCCESS;
}

CUresult cuMemSetMemPool(CUmemLocation* location, CUmemAllocationType type, CUmemoryPool pool) {
    FAKE_ENTRY_INIT("cuMemSetMemPool");
    if (location == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (const CUresult r = fake::check_location(*location, type); r != CUDA_SUCCESS) return r;
    const Pool* p = fake::find_pool(pool);
    if (p == nullptr || p->imported ||
        fake::key_of(p->props.location, p->props.allocType) != fake::key_of(*location, type)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    fake::currents()[fake::key_of(*location, type)] = pool;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice dev) {
    FAKE_ENTRY_INIT("cuDeviceGetDefaultMemPool");
    CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, dev};
    if (pool == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (const CUresult r = fake::check_location(loc, CU_MEM_ALLOCATION_TYPE_PINNED); r != CUDA_SUCCESS) return r;
    *pool = fake::default_pool(loc, CU_MEM_ALLOCATION_TYPE_PINNED);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev) {
    FAKE_ENTRY_INIT("cuDeviceGetMemPool");
    CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, dev};
    if (pool == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (const CUresult r = fake::check_location(loc, CU_MEM_ALLOCATION_TYPE_PINNED); r != CUDA_SUCCESS) return r;
    *pool = fake::current_pool(loc, CU_MEM_ALLOCATION_TYPE_PINNED);
    return CUDA_SUCCESS;
}

CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) {
    FAKE_ENTRY_INIT("cuDeviceSetMemPool");
    CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, dev};
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const Pool* p = fake::find_pool(pool);
    if (fake::device(dev) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (p == nullptr || p->imported || p->props.allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        fake::key_of(p->props.location, p->props.allocType) != fake::key_of(loc, CU_MEM_ALLOCATION_TYPE_PINNED)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    fake::currents()[fake::key_of(loc, CU_MEM_ALLOCATION_TYPE_PINNED)] = pool;
    return CUDA_SUCCESS;
}

CUresult cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* props) {
    FAKE_ENTRY_INIT("cuMemPoolCreate");
    if (pool == nullptr || props == nullptr || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        props->win32SecurityAttributes != nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (std::any_of(std::begin(props->reserved), std::end(props->reserved), [](unsigned char c) { return c != 0; })) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (const CUresult r = fake::check_location(props->location, props->allocType); r != CUDA_SUCCESS) return r;
    // Handle types must be within what the device's pools support (the system's: device 0 for host).
    const int dev = fake::checked_device(props->location);
    const auto& attrs = fake::device(dev)->attrs;
    const auto mask = attrs.find(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES);
    const unsigned supported = mask == attrs.end() ? 0u : static_cast<unsigned>(mask->second);
    if ((static_cast<unsigned>(props->handleTypes) & ~supported) != 0) return CUDA_ERROR_NOT_SUPPORTED;
    *pool = fake::add_pool(fake::new_pool(*props)).handle;
    return CUDA_SUCCESS;
}

CUresult cuMemPoolDestroy(CUmemoryPool pool) {
    FAKE_ENTRY_INIT("cuMemPoolDestroy");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    Pool* p = fake::find_pool(pool);
    if (p == nullptr || p->is_default) return CUDA_ERROR_INVALID_VALUE;
    // Destroying a current pool makes the location's default pool current again.
    for (auto it = fake::currents().begin(); it != fake::currents().end();) {
        it = it->second == pool ? fake::currents().erase(it) : std::next(it);
    }
    p->destroyed = true;
    fake::drop_if_done(*p);
    return CUDA_SUCCESS;
}

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
    FAKE_ENTRY_INIT("cuMemPoolGetAttribute");
    fake::count_variant("cuMemPoolGetAttribute", attr);
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    Pool* p = fake::find_pool(pool);
    // Statistics are per process: an imported pool answers nothing.
    if (p == nullptr || p->imported || value == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (attr >= CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES &&
        attr <= CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES) {
        *static_cast<int*>(value) = p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
        return CUDA_SUCCESS;
    }
    // The location attributes (11 id, 12 type: CUDA 13.2) and 13.4's locality domain (15), ints.
    const int version = fake::state().driver_version;
    if ((attr == 11 || attr == 12) && version >= 13020) {
        *static_cast<int*>(value) = attr == 11 ? p->props.location.id : static_cast<int>(p->props.location.type);
        return CUDA_SUCCESS;
    }
    if (attr == fake::kPoolAttrDomain && version >= 13040) {
        *static_cast<int*>(value) = fake::granted_domain(p->props.location);
        return CUDA_SUCCESS;
    }
    bool ok = false;
    const std::uint64_t v = fake::u64_attribute(*p, attr, ok);
    if (!ok) return CUDA_ERROR_INVALID_VALUE;
    *static_cast<cuuint64_t*>(value) = v;
    return CUDA_SUCCESS;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
    FAKE_ENTRY_INIT("cuMemPoolSetAttribute");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    Pool* p = fake::find_pool(pool);
    if (p == nullptr || p->imported || value == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (attr >= CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES &&
        attr <= CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES) {
        p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] = *static_cast<int*>(value) != 0 ? 1 : 0;
        return CUDA_SUCCESS;
    }
    const std::uint64_t v = *static_cast<cuuint64_t*>(value);
    switch (attr) {
        case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
            p->threshold = v;
            return CUDA_SUCCESS;
        // High-water marks reset only to zero, and then stand at the current figure.
        case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
            if (v != 0) return CUDA_ERROR_INVALID_VALUE;
            p->reserved_high = p->reserved;
            return CUDA_SUCCESS;
        case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
            if (v != 0) return CUDA_ERROR_INVALID_VALUE;
            p->used_high = p->used;
            return CUDA_SUCCESS;
        default:
            return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep) {
    FAKE_ENTRY_INIT("cuMemPoolTrimTo");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    Pool* p = fake::find_pool(pool);
    if (p == nullptr || p->imported) return CUDA_ERROR_INVALID_VALUE;
    fake::release_down_to(*p, keep);
    return CUDA_SUCCESS;
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t size, CUmemoryPool pool, CUstream stream) {
    FAKE_ENTRY_INIT("cuMemAllocFromPoolAsync");
    (void)stream;
    if (fake::current_context_device() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    Pool* p = fake::find_pool(pool);
    if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return fake::allocate(*p, size, dptr);
}

CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t size, CUstream stream) {
    FAKE_ENTRY_INIT("cuMemAllocAsync");
    (void)stream;
    const int dev = fake::current_context_device();
    if (dev < 0) return CUDA_ERROR_INVALID_CONTEXT;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, dev};
    if (const CUresult r = fake::check_location(loc, CU_MEM_ALLOCATION_TYPE_PINNED); r != CUDA_SUCCESS) return r;
    return fake::allocate(*fake::find_pool(fake::current_pool(loc, CU_MEM_ALLOCATION_TYPE_PINNED)), size, dptr);
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream) {
    FAKE_ENTRY_INIT("cuMemFreeAsync");
    (void)stream;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    return fake::free_pool_pointer(dptr) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

}  // extern "C"
