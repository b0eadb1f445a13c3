// The fake driver's locality domains (fake_locality.hpp): the location rules, the pointer attribute, the
// SM split and green contexts, and the per-domain bandwidth of the check kernel.
#include "fake_locality.hpp"

#include <atomic>
#include <cstring>

#include "cuda/locality_compat.hpp"
#include "fake_memory.hpp"
#include "fake_pools.hpp"

namespace fake {
namespace {

constexpr int kDriver134 = 13040;
constexpr std::size_t kSmFlagsOffset = 108;
constexpr std::size_t kSmDomainOffset = 112;
constexpr unsigned kGroupFlagDomain = 0x2;

std::atomic<std::int64_t> clock_offset{0};

int attr_or(int ordinal, int attribute, int fallback) {
    const Device* d = device(ordinal);
    if (d == nullptr) return fallback;
    const auto it = d->attrs.find(attribute);
    return it == d->attrs.end() ? fallback : it->second;
}

// The granted location of the memory at ptr (a mapping or a pool block); false for memory the fake
// does not know. Linear blocks (cuMemAlloc) are plain device memory. Caller holds state().mutex.
bool location_at(std::uintptr_t ptr, CUmemLocation& loc) {
    if (const Allocation* a = allocation_at(static_cast<CUdeviceptr>(ptr), nullptr)) {
        loc = a->prop.location;
        return true;
    }
    if (const Pool* p = pool_of_block(ptr)) {
        loc = p->props.location;
        return true;
    }
    if (valid_linear_range(ptr, 1, -1)) {
        loc = CUmemLocation{CU_MEM_LOCATION_TYPE_DEVICE, 0};
        return true;
    }
    return false;
}

void put_u32(CUdevResource& r, std::size_t offset, unsigned value) {
    std::memcpy(reinterpret_cast<unsigned char*>(&r) + offset, &value, sizeof value);
}
unsigned get_u32(const CUdevResource& r, std::size_t offset) {
    unsigned value = 0;
    std::memcpy(&value, reinterpret_cast<const unsigned char*>(&r) + offset, sizeof value);
    return value;
}

// Where the fake keeps the device of a resource: in the padding the driver keeps to itself.
constexpr std::size_t kDeviceOffset = 4;

// An SM resource of device `dev`, `count` SMs, localized to `domain` (-1: not localized).
CUdevResource sm_resource(int dev, unsigned count, int domain) {
    CUdevResource r{};
    put_u32(r, kDeviceOffset, static_cast<unsigned>(dev));
    r.type = CU_DEV_RESOURCE_TYPE_SM;
    r.sm.smCount = count;
    r.sm.minSmPartitionSize = 2;
    r.sm.smCoscheduledAlignment = 2;
    put_u32(r, kSmFlagsOffset, domain >= 0 ? kGroupFlagDomain : 0);
    put_u32(r, kSmDomainOffset, domain >= 0 ? static_cast<unsigned>(domain) : 0);
    return r;
}

// A green context (and the CUcontext made from it) is the device ordinal plus one, with the domain plus
// two above bit 16 (1 for the whole device): fake_context.cpp decodes it.
std::intptr_t green_value(int device, int domain) {
    return static_cast<std::intptr_t>(device + 1) | (static_cast<std::intptr_t>(domain + 2) << 16);
}

}  // namespace

int location_device(const CUmemLocation& loc) {
    if (loc.type == CU_MEM_LOCATION_TYPE_DEVICE) return loc.id;
    if (is_localized(loc)) return loc.id & 0xff;
    return -1;
}

int domain_count(int ordinal) {
    return attr_or(ordinal, kAttrDomainCount, 1);
}

CUresult check_localized(const CUmemLocation& loc) {
    if (state().driver_version < kDriver134) return CUDA_ERROR_INVALID_VALUE;
    if ((static_cast<unsigned>(loc.id) >> 16) != 0) return CUDA_ERROR_INVALID_VALUE;
    const int dev = loc.id & 0xff;
    if (device(dev) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    const int domain = (loc.id >> 8) & 0xff;
    return domain < domain_count(dev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUmemLocation granted_location(const CUmemLocation& loc) {
    if (!is_localized(loc) || domain_count(loc.id & 0xff) > 1) return loc;
    return CUmemLocation{CU_MEM_LOCATION_TYPE_DEVICE, loc.id & 0xff};
}

int granted_domain(const CUmemLocation& loc) {
    return is_localized(loc) ? (loc.id >> 8) & 0xff : -1;
}

void charge_read(std::uintptr_t ptr, std::size_t bytes, std::int64_t spent_ns) {
    CUmemLocation loc{};
    if (!location_at(ptr, loc)) return;
    const Device* d = device(checked_device(loc));
    if (d == nullptr) return;
    const auto it = d->extra.find("locality");
    if (it == d->extra.end() || !it->is_object()) return;
    const int from = current_context_domain();
    const int at = granted_domain(loc);
    const char* which = from < 0 || at < 0 ? "device_gbps" : from == at ? "local_gbps" : "remote_gbps";
    const double gbps = it->value(which, 0.0);
    if (gbps <= 0) return;
    clock_offset += static_cast<std::int64_t>(static_cast<double>(bytes) / gbps) - spent_ns;  // bytes / (GB/s) = ns
}

std::int64_t event_clock_offset_ns() {
    return clock_offset.load();
}

}  // namespace fake

extern "C" {

// Only the locality attribute: a 13.4 driver answers the domain of localized memory, -1 for other memory.
CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
    FAKE_ENTRY_INIT("cuPointerGetAttribute");
    if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (static_cast<int>(attribute) != fake::kPointerAttrDomain || fake::state().driver_version < fake::kDriver134) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    CUmemLocation loc{};
    if (!fake::location_at(static_cast<std::uintptr_t>(ptr), loc)) return CUDA_ERROR_INVALID_VALUE;
    *static_cast<int*>(data) = fake::granted_domain(loc);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetDevResource(CUdevice dev, CUdevResource* result, CUdevResourceType type) {
    FAKE_ENTRY_INIT("cuDeviceGetDevResource");
    if (result == nullptr || type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_VALUE;
    if (fake::device(dev) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    *result = fake::sm_resource(
        dev, static_cast<unsigned>(fake::attr_or(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0)), -1);
    return CUDA_SUCCESS;
}

// The 13.1 split with 13.4's locality flag: a group with the flag takes SMs of its domain (smCount 0:
// all the domain guarantees, attribute 157); the remainder holds what no group took.
CUresult cuDevSmResourceSplit(CUdevResource* result, unsigned int nbGroups, const CUdevResource* input,
                              CUdevResource* remainder, unsigned int flags, CU_DEV_SM_RESOURCE_GROUP_PARAMS* params) {
    FAKE_ENTRY_INIT("cuDevSmResourceSplit");
    if (input == nullptr || params == nullptr || nbGroups == 0 || flags != 0 || input->type != CU_DEV_RESOURCE_TYPE_SM)
        return CUDA_ERROR_INVALID_VALUE;
    const int dev = static_cast<int>(fake::get_u32(*input, fake::kDeviceOffset));
    if (fake::device(dev) == nullptr) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
    const unsigned per_domain = static_cast<unsigned>(fake::attr_or(dev, fake::kAttrSmsPerDomain, 0));
    unsigned taken = 0;
    for (unsigned i = 0; i < nbGroups; ++i) {
        CU_DEV_SM_RESOURCE_GROUP_PARAMS& g = params[i];
        const unsigned domain_id = g.localityDomainId;
        int domain = -1;
        if (g.flags & fake::kGroupFlagDomain) {
            if (fake::state().driver_version < fake::kDriver134) return CUDA_ERROR_INVALID_VALUE;
            if (static_cast<int>(domain_id) >= fake::domain_count(dev)) return CUDA_ERROR_INVALID_VALUE;
            domain = static_cast<int>(domain_id);
            if (g.smCount == 0) g.smCount = per_domain;
            if (g.smCount > per_domain) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
        } else if (g.smCount == 0) {
            return CUDA_ERROR_INVALID_VALUE;
        }
        taken += g.smCount;
        if (taken > input->sm.smCount) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
        if (result != nullptr) result[i] = fake::sm_resource(dev, g.smCount, domain);
    }
    if (remainder != nullptr) *remainder = fake::sm_resource(dev, input->sm.smCount - taken, -1);
    return CUDA_SUCCESS;
}

// A descriptor of one resource: its domain plus two (1 for SMs of no domain).
CUresult cuDevResourceGenerateDesc(CUdevResourceDesc* desc, CUdevResource* resources, unsigned int nbResources) {
    FAKE_ENTRY_INIT("cuDevResourceGenerateDesc");
    if (desc == nullptr || resources == nullptr || nbResources != 1 || resources[0].type != CU_DEV_RESOURCE_TYPE_SM)
        return CUDA_ERROR_INVALID_VALUE;
    const bool localized = (fake::get_u32(resources[0], fake::kSmFlagsOffset) & fake::kGroupFlagDomain) != 0;
    const int domain = localized ? static_cast<int>(fake::get_u32(resources[0], fake::kSmDomainOffset)) : -1;
    *desc = reinterpret_cast<CUdevResourceDesc>(static_cast<std::intptr_t>(domain + 2));
    return CUDA_SUCCESS;
}

CUresult cuGreenCtxCreate(CUgreenCtx* ctx, CUdevResourceDesc desc, CUdevice dev, unsigned int flags) {
    FAKE_ENTRY_INIT("cuGreenCtxCreate");
    if (ctx == nullptr || desc == nullptr || (flags & CU_GREEN_CTX_DEFAULT_STREAM) == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (fake::device(dev) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    const int domain = static_cast<int>(reinterpret_cast<std::intptr_t>(desc)) - 2;
    *ctx = reinterpret_cast<CUgreenCtx>(fake::green_value(dev, domain));
    return CUDA_SUCCESS;
}

CUresult cuGreenCtxDestroy(CUgreenCtx ctx) {
    FAKE_ENTRY_INIT("cuGreenCtxDestroy");
    return ctx == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult cuCtxFromGreenCtx(CUcontext* ctx, CUgreenCtx green) {
    FAKE_ENTRY_INIT("cuCtxFromGreenCtx");
    if (ctx == nullptr || green == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *ctx = reinterpret_cast<CUcontext>(green);
    return CUDA_SUCCESS;
}

}  // extern "C"
