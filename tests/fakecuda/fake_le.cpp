// The fake driver's CUDA 13.3 logical endpoints, with the rules the driver documents: IDs from reserved
// ranges, limits per properties from the profile device's "logical_endpoints" object, construction that
// completes after `query_polls` polls (never when -1; a multicast team only once every device was
// added), alignment and size checks (CUDA_ERROR_INVALID_VALUE), the unicast owner and multicast team
// rules, host-NUMA memory on the node closest to the device, exportable endpoints binding exportable
// memory, and a per-device budget of bind resources (CUDA_ERROR_OUT_OF_MEMORY when spent).
//
// Profile keys, per device under "logical_endpoints": bind_alignment, max_size, query_polls,
// bind_resources, and optionally multicast_bind_alignment, multicast_max_size, and create_error /
// query_error (a CUresult name the call returns, e.g. CUDA_ERROR_SYSTEM_NOT_READY). At the top level:
// logical_endpoint_ids (how many IDs the driver hands out, default 1024).
//
// What a process still holds of them at exit is in endpoint_leaks (FAKECUDA_CHECK_LEAKS, fake_state).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "cuda/logical_endpoint_compat.hpp"
#include "fake_memory.hpp"

namespace fake {
namespace {

using u64 = std::uint64_t;
using cumemctl::le::kFlagCountedOps;
using cumemctl::le::kIpcFabric;
using cumemctl::le::kTypeMulticast;
using cumemctl::le::kTypeUnicast;

struct LeBind {
    int device = 0;
    u64 offset = 0;
    u64 size = 0;
};

struct Endpoint {
    CUlogicalEndpointProp prop{};
    bool imported = false;
    int polls = 0;  // Query calls that saw the endpoint complete its team
    std::vector<int> added;
    std::vector<LeBind> binds;
};

struct LeState {
    std::set<CUlogicalEndpointId> reserved;
    std::map<CUlogicalEndpointId, Endpoint> endpoints;
    std::map<int, int> binds_in_use;  // device -> bind resources taken
    CUlogicalEndpointId next = 1;
};

LeState& le() {
    static auto* s = new LeState;  // never destroyed: entry points may run during exit
    return *s;
}

// The device's "logical_endpoints" profile object (empty when it has none).
nlohmann::json config(int dev) {
    const Device* d = device(dev);
    if (d == nullptr) return nlohmann::json::object();
    return d->extra.value("logical_endpoints", nlohmann::json::object());
}

bool is_multicast(const CUlogicalEndpointProp& p) {
    return static_cast<int>(p.type) == kTypeMulticast;
}

// The device whose profile answers for an endpoint: the owner, or the first device of a team.
int config_device(const CUlogicalEndpointProp& p) {
    return is_multicast(p) ? 0 : p.unicast.device;
}

u64 alignment_of(const CUlogicalEndpointProp& p) {
    const auto c = config(config_device(p));
    const u64 base = c.value("bind_alignment", u64{2} << 20);
    return is_multicast(p) ? c.value("multicast_bind_alignment", base) : base;
}

u64 max_size_of(const CUlogicalEndpointProp& p) {
    const auto c = config(config_device(p));
    const u64 base = c.value("max_size", u64{1} << 36);
    return is_multicast(p) ? c.value("multicast_max_size", base) : base;
}

// A configured error for `key` ("create_error", "query_error"), or CUDA_SUCCESS.
CUresult configured_error(const CUlogicalEndpointProp& p, const char* key) {
    const auto c = config(config_device(p));
    return c.contains(key) ? result_from_name(c[key].get<std::string>()) : CUDA_SUCCESS;
}

// Checks the properties as Create and GetLimits do (not the size against the limits).
CUresult check_prop(const CUlogicalEndpointProp& p) {
    const int type = static_cast<int>(p.type);
    if (type != kTypeUnicast && type != kTypeMulticast) return CUDA_ERROR_INVALID_VALUE;
    if ((p.flags & ~kFlagCountedOps) != 0 || (p.ipcHandleTypes & ~static_cast<unsigned>(kIpcFabric)) != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (type == kTypeUnicast) {
        if (device(p.unicast.device) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
        if (!has_attr(p.unicast.device, cumemctl::le::kAttrUnicastSupported)) return CUDA_ERROR_NOT_SUPPORTED;
        if ((p.flags & kFlagCountedOps) && !has_attr(p.unicast.device, cumemctl::le::kAttrCountedOpsSupported)) {
            return CUDA_ERROR_NOT_SUPPORTED;
        }
    } else if (p.multicast.numDevices == 0 || p.multicast.numDevices > state().devices.size()) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

bool constructed(const Endpoint& e) {
    const int needed = config(config_device(e.prop)).value("query_polls", 1);
    return needed >= 0 && e.polls >= needed;
}

// Whether memory at `loc` may be bound on `dev`: device memory of that device, or host-NUMA memory of
// the node closest to it (CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID).
bool local_to(const CUmemLocation& loc, int dev) {
    if (loc.type == CU_MEM_LOCATION_TYPE_DEVICE) return loc.id == dev;
    if (loc.type != CU_MEM_LOCATION_TYPE_HOST_NUMA) return false;
    const auto& attrs = device(dev)->attrs;
    const auto it = attrs.find(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
    return it != attrs.end() && it->second == loc.id;
}

// The rules every bind shares; `alloc` is the memory, `alloc_offset` where the binding starts in it.
CUresult check_bind(Endpoint& e, CUdevice dev, u64 offset, const Allocation* alloc, u64 alloc_offset, u64 size) {
    if (e.imported && !is_multicast(e.prop)) return CUDA_ERROR_INVALID_VALUE;  // imported unicast binds nothing
    if (!constructed(e)) return CUDA_ERROR_INVALID_VALUE;
    if (device(dev) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (is_multicast(e.prop) ? std::find(e.added.begin(), e.added.end(), dev) == e.added.end()
                             : dev != e.prop.unicast.device) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    const u64 a = alignment_of(e.prop);
    if (alloc == nullptr || size == 0 || offset % a != 0 || alloc_offset % a != 0 || size % a != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (size + alloc_offset > alloc->size || size + offset > e.prop.size) return CUDA_ERROR_INVALID_VALUE;
    if (!local_to(alloc->prop.location, dev)) return CUDA_ERROR_INVALID_VALUE;
    const bool exportable = (e.prop.ipcHandleTypes & kIpcFabric) != 0 || e.imported;
    if (exportable && (alloc->prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_FABRIC) == 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    for (const auto& b : e.binds) {
        if (b.device == dev && offset < b.offset + b.size && b.offset < offset + size) return CUDA_ERROR_INVALID_VALUE;
    }
    const int budget = config(dev).value("bind_resources", 64);
    if (le().binds_in_use[dev] >= budget) return CUDA_ERROR_OUT_OF_MEMORY;
    return CUDA_SUCCESS;
}

void add_bind(Endpoint& e, CUdevice dev, u64 offset, u64 size) {
    e.binds.push_back({dev, offset, size});
    ++le().binds_in_use[dev];
}

Endpoint* find_endpoint(CUlogicalEndpointId id) {
    const auto it = le().endpoints.find(id);
    return it == le().endpoints.end() ? nullptr : &it->second;
}

// An ID that is reserved and has no endpoint yet.
bool free_id(CUlogicalEndpointId id) {
    return le().reserved.count(id) != 0 && le().endpoints.count(id) == 0;
}

}  // namespace

std::vector<std::string> endpoint_leaks() {
    std::vector<std::string> left;
    std::size_t binds = 0;
    for (const auto& [id, e] : le().endpoints) binds += e.binds.size();
    if (!le().reserved.empty()) left.push_back(std::to_string(le().reserved.size()) + " endpoint ids not released");
    if (!le().endpoints.empty()) left.push_back(std::to_string(le().endpoints.size()) + " endpoints not destroyed");
    if (binds != 0) left.push_back(std::to_string(binds) + " bindings not unbound");
    return left;
}

}  // namespace fake

using fake::Endpoint;
using fake::le;

extern "C" {

CUresult cuLogicalEndpointIdReserve(CUlogicalEndpointId* base, cuuint32_t count) {
    FAKE_ENTRY_INIT("cuLogicalEndpointIdReserve");
    if (base == nullptr || count == 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const std::size_t capacity = fake::state().profile.value("logical_endpoint_ids", std::size_t{1024});
    if (le().reserved.size() + count > capacity) return CUDA_ERROR_OUT_OF_MEMORY;
    *base = le().next;
    for (cuuint32_t i = 0; i < count; ++i) le().reserved.insert(le().next + i);
    le().next += count;
    return CUDA_SUCCESS;
}

CUresult cuLogicalEndpointIdRelease(CUlogicalEndpointId base, cuuint32_t count) {
    FAKE_ENTRY_INIT("cuLogicalEndpointIdRelease");
    if (count == 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    for (cuuint32_t i = 0; i < count; ++i) {
        // Every ID must be reserved (a second release is refused) and its endpoint destroyed.
        if (le().reserved.count(base + i) == 0 || le().endpoints.count(base + i) != 0) return CUDA_ERROR_INVALID_VALUE;
    }
    for (cuuint32_t i = 0; i < count; ++i) le().reserved.erase(base + i);
    return CUDA_SUCCESS;
}

CUresult cuLogicalEndpointGetLimits(cuuint64_t* bindAlignment, cuuint64_t* maxSize, const CUlogicalEndpointProp* prop) {
    FAKE_ENTRY_INIT("cuLogicalEndpointGetLimits");
    if (bindAlignment == nullptr || maxSize == nullptr || prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (const CUresult r = fake::check_prop(*prop); r != CUDA_SUCCESS) return r;
    *bindAlignment = fake::alignment_of(*prop);
    *maxSize = fake::max_size_of(*prop);
    return CUDA_SUCCESS;
}

CUresult cuLogicalEndpointCreate(CUlogicalEndpointId id, const CUlogicalEndpointProp* prop) {
    FAKE_ENTRY_INIT("cuLogicalEndpointCreate");
    if (prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (!fake::free_id(id)) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = fake::check_prop(*prop); r != CUDA_SUCCESS) return r;
    if (const CUresult r = fake::configured_error(*prop, "create_error"); r != CUDA_SUCCESS) return r;
    const auto a = fake::alignment_of(*prop);
    if (prop->size == 0 || prop->size % a != 0 || prop->size > fake::max_size_of(*prop))
        return CUDA_ERROR_INVALID_VALUE;
    if ((prop->ipcHandleTypes & fake::kIpcFabric) && !fake::imex_channel_available()) return CUDA_ERROR_NOT_PERMITTED;
    Endpoint e;
    e.prop = *prop;
    le().endpoints[id] = e;
    return CUDA_SUCCESS;
}

CUresult cuLogicalEndpointAddDevice(CUlogicalEndpointId id, CUdevice dev) {
    FAKE_ENTRY_INIT("cuLogicalEndpointAddDevice");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    Endpoint* e = fake::find_endpoint(id);
    if (e == nullptr || e->imported || !fake::is_multicast(e->prop)) return CUDA_ERROR_INVALID_VALUE;
    if (fake::device(dev) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (!fake::has_attr(dev, cumemctl::le::kAttrMulticastSupported)) return CUDA_ERROR_NOT_SUPPORTED;
    if ((e->prop.flags & fake::kFlagCountedOps) && !fake::has_attr(dev, cumemctl::le::kAttrCountedOpsSupported)) {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (std::find(e->added.begin(), e->added.end(), dev) != e->added.end()) return CUDA_ERROR_INVALID_VALUE;
    if (e->added.size() >= e->prop.multicast.numDevices) return CUDA_ERROR_INVALID_VALUE;
    e->added.push_back(dev);
    return CUDA_SUCCESS;
}

CUresult cuLogicalEndpointQuery(CUlogicalEndpointId id, cuuint32_t count, int* queryStatus) {
    FAKE_ENTRY_INIT("cuLogicalEndpointQuery");
    if (queryStatus == nullptr || count == 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    bool all = true;
    for (cuuint32_t i = 0; i < count; ++i) {
        Endpoint* e = fake::find_endpoint(id + i);
        if (e == nullptr) return CUDA_ERROR_INVALID_VALUE;
        if (const CUresult r = fake::configured_error(e->prop, "query_error"); r != CUDA_SUCCESS) return r;
        const bool team_complete =
            !fake::is_multicast(e->prop) || e->imported || e->added.size() == e->prop.multicast.numDevices;
        if (team_complete) ++e->polls;
        all = all && team_complete && fake::constructed(*e);
    }
    *queryStatus = all ? 1 : 0;
    return CUDA_SUCCESS;
}

CUresult cuLogicalEndpointBindMem(CUlogicalEndpointId id, CUdevice dev, cuuint64_t offset,
                                  CUmemGenericAllocationHandle memHandle, cuuint64_t memOffset, cuuint64_t size,
                                  unsigned long long flags) {
    FAKE_ENTRY_INIT("cuLogicalEndpointBindMem");
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    Endpoint* e = fake::find_endpoint(id);
    if (e == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const fake::Allocation* alloc = fake::find_allocation(memHandle);
    if (const CUresult r = fake::check_bind(*e, dev, offset, alloc, memOffset, size); r != CUDA_SUCCESS) return r;
    fake::add_bind(*e, dev, offset, size);
    return CUDA_SUCCESS;
}

CUresult cuLogicalEndpointBindAddr(CUlogicalEndpointId id, CUdevice dev, cuuint64_t offset, void* ptr, cuuint64_t size,
                                   unsigned long long flags) {
    FAKE_ENTRY_INIT("cuLogicalEndpointBindAddr");
    if (flags != 0 || ptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    Endpoint* e = fake::find_endpoint(id);
    if (e == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto dptr = reinterpret_cast<CUdeviceptr>(ptr);
    // The address must be mapped, accessible, and aligned like every offset.
    if (!fake::valid_device_range(dptr, size) || dptr % fake::alignment_of(e->prop) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    std::size_t in_alloc = 0;
    const fake::Allocation* alloc = fake::allocation_at(dptr, &in_alloc);
    if (const CUresult r = fake::check_bind(*e, dev, offset, alloc, in_alloc, size); r != CUDA_SUCCESS) return r;
    fake::add_bind(*e, dev, offset, size);
    return CUDA_SUCCESS;
}

CUresult cuLogicalEndpointUnbind(CUlogicalEndpointId id, CUdevice dev, cuuint64_t offset, cuuint64_t size) {
    FAKE_ENTRY_INIT("cuLogicalEndpointUnbind");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    Endpoint* e = fake::find_endpoint(id);
    if (e == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto a = fake::alignment_of(e->prop);
    if (size == 0 || offset % a != 0 || size % a != 0) return CUDA_ERROR_INVALID_VALUE;
    // The offset starts a binding; the size covers whole bindings exactly, one after the other.
    std::vector<std::size_t> covered;
    fake::u64 cursor = offset;
    while (cursor < offset + size) {
        std::size_t i = 0;
        while (i < e->binds.size() && !(e->binds[i].device == dev && e->binds[i].offset == cursor)) ++i;
        if (i == e->binds.size()) return CUDA_ERROR_INVALID_VALUE;
        covered.push_back(i);
        cursor += e->binds[i].size;
    }
    if (cursor != offset + size) return CUDA_ERROR_INVALID_VALUE;
    std::sort(covered.rbegin(), covered.rend());
    for (std::size_t i : covered) {
        e->binds.erase(e->binds.begin() + static_cast<std::ptrdiff_t>(i));
        --le().binds_in_use[dev];
    }
    return CUDA_SUCCESS;
}

CUresult cuLogicalEndpointExport(void* handle, CUlogicalEndpointId id, CUlogicalEndpointIpcHandleType type) {
    FAKE_ENTRY_INIT("cuLogicalEndpointExport");
    if (handle == nullptr || static_cast<int>(type) != fake::kIpcFabric) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const Endpoint* e = fake::find_endpoint(id);
    if (e == nullptr || (e->prop.ipcHandleTypes & fake::kIpcFabric) == 0) return CUDA_ERROR_INVALID_VALUE;
    if (!fake::imex_channel_available()) return CUDA_ERROR_NOT_PERMITTED;
    std::memset(handle, 0, cumemctl::le::kFabricHandleBytes);
    std::snprintf(static_cast<char*>(handle), cumemctl::le::kFabricHandleBytes, "fakecuda-le:%d:%u",
                  static_cast<int>(getpid()), id);
    return CUDA_SUCCESS;
}

// Imports an endpoint that this process exported (the fake does not model other processes' endpoints).
CUresult cuLogicalEndpointImport(CUlogicalEndpointId id, const void* handle, CUlogicalEndpointIpcHandleType type) {
    FAKE_ENTRY_INIT("cuLogicalEndpointImport");
    if (handle == nullptr || static_cast<int>(type) != fake::kIpcFabric) return CUDA_ERROR_INVALID_VALUE;
    int pid = 0;
    unsigned source = 0;
    if (std::sscanf(static_cast<const char*>(handle), "fakecuda-le:%d:%u", &pid, &source) != 2) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (!fake::imex_channel_available()) return CUDA_ERROR_NOT_PERMITTED;
    if (pid != static_cast<int>(getpid())) return CUDA_ERROR_NOT_SUPPORTED;
    const Endpoint* src = fake::find_endpoint(source);
    if (src == nullptr || !fake::free_id(id)) return CUDA_ERROR_INVALID_VALUE;
    Endpoint e;
    e.prop = src->prop;
    e.imported = true;
    e.added = src->added;
    le().endpoints[id] = e;
    return CUDA_SUCCESS;
}

CUresult cuLogicalEndpointDestroy(CUlogicalEndpointId id) {
    FAKE_ENTRY_INIT("cuLogicalEndpointDestroy");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const Endpoint* e = fake::find_endpoint(id);
    // Strict on purpose: an endpoint that still has bindings is refused, so a test sees a missing unbind.
    if (e == nullptr || !e->binds.empty()) return CUDA_ERROR_INVALID_VALUE;
    le().endpoints.erase(id);
    return CUDA_SUCCESS;
}

}  // extern "C"
