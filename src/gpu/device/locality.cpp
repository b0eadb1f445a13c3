#include "gpu/device/locality.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/setting.hpp"
#include "cuda/driver_call.hpp"
#include "cuda/driver_info.hpp"
#include "cuda/owned_handle.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/device/memory_props.hpp"
#include "gpu/device/primary_context.hpp"
#include "report/json_fields.hpp"

namespace cumemctl::gpu {
namespace {

// cuMemCreate of one granule with `prop`, released again (an OwnedHandle) before the answer is returned.
CUresult create_and_release(const DriverApi& api, std::size_t granule, const CUmemAllocationProp& prop) {
    OwnedHandle<CUmemGenericAllocationHandle> handle(api.cuMemRelease);
    return api.cuMemCreate(handle.out(), granule, &prop, 0);
}

// The one-granule localized allocation of query_locality: whether cuMemCreate takes it, in words.
void probe_allocation(const DriverApi& api, int device, LocalityProbe probe, LocalityInfo& info) {
    if (api.cuMemGetAllocationGranularity == nullptr || api.cuMemCreate == nullptr || api.cuMemRelease == nullptr) {
        info.allocation_detail = "the driver lacks cuMemCreate";
        return;
    }
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = static_cast<CUmemLocationType>(locality::kLocationType);
    prop.location.id = locality::packed_id(device, 0);
    std::size_t granule = 0;
    CUresult r = api.cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    if (r != CUDA_SUCCESS || granule == 0) {
        info.allocation_works = false;
        info.allocation_detail = "cuMemGetAllocationGranularity: " + describe_failure(api, r, "").name;
        return;
    }
    r = create_and_release(api, granule, prop);
    // A driver that wants a context for it gets the device's primary context, for this call only.
    if (r == CUDA_ERROR_INVALID_CONTEXT && probe == LocalityProbe::context_if_needed) {
        try {
            const PrimaryContext context(api, device);
            r = create_and_release(api, granule, prop);
            info.allocation_works = r == CUDA_SUCCESS;
            info.allocation_detail = fmt::format("cuMemCreate of {} bytes at domain 0 in the primary context: {}",
                                                 granule, describe_failure(api, r, "").name);
        } catch (const Error& e) {
            info.allocation_works = false;
            info.allocation_detail = e.what();
        }
        return;
    }
    info.allocation_works = r == CUDA_SUCCESS;
    if (r == CUDA_SUCCESS) {
        info.allocation_detail = fmt::format("cuMemCreate of {} bytes at domain 0: CUDA_SUCCESS", granule);
    } else {
        info.allocation_detail =
            fmt::format("cuMemCreate of {} bytes at domain 0: {}", granule, describe_failure(api, r, "").name);
    }
}

nlohmann::json or_null(const std::optional<int>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

Placement read_placement(const DriverApi& api, const char* source, CUresult r, int value, int asked, int expected) {
    Placement p{source, asked, expected, std::nullopt, {}};
    if (r == CUDA_SUCCESS) {
        p.value = value;
    } else {
        p.refusal = describe_failure(api, r, "").name;
    }
    return p;
}

}  // namespace

bool is_localized(const CUmemLocation& location) {
    return static_cast<int>(location.type) == locality::kLocationType;
}

bool is_device_memory(CUmemLocationType type) {
    return type == CU_MEM_LOCATION_TYPE_DEVICE || static_cast<int>(type) == locality::kLocationType;
}

int location_device(const CUmemLocation& location) {
    if (location.type == CU_MEM_LOCATION_TYPE_DEVICE) return location.id;
    if (is_localized(location)) return locality::device_of(location.id);
    return -1;
}

int location_domain(const CUmemLocation& location) {
    return is_localized(location) ? locality::domain_of(location.id) : -1;
}

std::string locality_unknown_reason(int version) {
    return fmt::format("driver {}; needs {}", cuda_version_string(version),
                       cuda_version_string(locality::kDriverVersion));
}

bool LocalityInfo::driver_has() const {
    return driver_version >= locality::kDriverVersion;
}

std::optional<int> LocalityInfo::sms_left_over() const {
    if (!domains || !sms_per_domain || !sms_total) return std::nullopt;
    return *sms_total - *domains * *sms_per_domain;
}

LocalityInfo query_locality(const DriverApi& api, int device, LocalityProbe probe) {
    LocalityInfo info;
    info.driver_version = driver_version(api);
    info.sms_total = device_attribute(api, device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    // Below 13.4 the attribute numbers may mean something else to the driver: do not ask.
    if (!info.driver_has()) return info;
    info.domains = device_attribute(api, device, locality::kAttrDomainCount);
    info.sms_per_domain = device_attribute(api, device, locality::kAttrSmsPerDomain);
    info.rdma_with_localized = device_attribute(api, device, locality::kAttrRdmaWithLocalized);
    if (probe != LocalityProbe::none && info.domains && *info.domains >= 1 && device <= locality::kMaxId) {
        probe_allocation(api, device, probe, info);
    }
    return info;
}

nlohmann::json locality_json(const LocalityInfo& info) {
    nlohmann::json j{{"domains", or_null(info.domains)},
                     {"sms_per_domain", or_null(info.sms_per_domain)},
                     {"sms_total", or_null(info.sms_total)},
                     {"sms_left_over", or_null(info.sms_left_over())},
                     {"rdma_with_localized_memory",
                      info.rdma_with_localized ? nlohmann::json(*info.rdma_with_localized != 0) : nlohmann::json()},
                     {"localized_allocation",
                      info.allocation_works ? nlohmann::json(*info.allocation_works) : nlohmann::json(nullptr)},
                     {"localized_allocation_detail", text_or_null(info.allocation_detail)}};
    j["unknown_reason"] =
        info.driver_has() ? nlohmann::json(nullptr) : nlohmann::json(locality_unknown_reason(info.driver_version));
    return j;
}

CUmemLocation localized_location(const DriverApi& api, int device, int domain) {
    if (domain > locality::kMaxId) {
        throw Error(ExitCode::usage, fmt::format("locality domain {} does not fit in a byte", domain),
                    "give a domain from 0 to 255 ('cumemctl devices' lists each device's domains)");
    }
    if (device > locality::kMaxId) {
        throw Error(ExitCode::unavailable,
                    fmt::format("device {} cannot be named in a localized location: its ordinal does not fit in a "
                                "byte (CUmemLocation.localized.deviceId)",
                                device),
                    "make the device visible under a lower ordinal (CUDA_VISIBLE_DEVICES)");
    }
    const int version = driver_version(api);
    if (version < locality::kDriverVersion) {
        throw Error(
            ExitCode::unavailable,
            fmt::format("locality domains need a CUDA 13.4 driver; this one is {}", cuda_version_string(version)),
            "ask for location device, or run on a node whose driver is CUDA 13.4 or newer");
    }
    const auto count = device_attribute(api, device, locality::kAttrDomainCount);
    if (!count || *count < 1) {
        throw Error(ExitCode::unavailable,
                    fmt::format("device {} reports no locality domain count (CU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_COUNT "
                                "{}: {})",
                                device, locality::kAttrDomainCount, count ? std::to_string(*count) : "unknown"),
                    "ask for location device");
    }
    if (domain >= *count) {
        throw Error(ExitCode::usage,
                    fmt::format("device {} has no locality domain {}: it has {} ({})", device, domain, *count,
                                *count == 1 ? std::string("domain 0 only") : fmt::format("0 to {}", *count - 1)),
                    fmt::format("give {} domain:0{}", setting_name(Setting::location),
                                *count == 1 ? "" : fmt::format(" to domain:{}", *count - 1)));
    }
    CUmemLocation loc{};
    loc.type = static_cast<CUmemLocationType>(locality::kLocationType);
    loc.id = locality::packed_id(device, domain);
    return loc;
}

Placement pointer_placement(const DriverApi& api, CUdeviceptr ptr, int asked, int domains) {
    int value = -2;
    const CUresult r =
        api.cuPointerGetAttribute == nullptr
            ? CUDA_ERROR_NOT_SUPPORTED
            : api.cuPointerGetAttribute(&value, static_cast<CUpointer_attribute>(locality::kPointerAttrDomain), ptr);
    return read_placement(api, "pointer attribute", r, value, asked, domains > 1 ? asked : -1);
}

Placement pool_placement(const DriverApi& api, CUmemoryPool pool, int asked, int domains) {
    int value = -2;
    const CUresult r =
        api.cuMemPoolGetAttribute == nullptr
            ? CUDA_ERROR_NOT_SUPPORTED
            : api.cuMemPoolGetAttribute(pool, static_cast<CUmemPool_attribute>(locality::kPoolAttrDomain), &value);
    return read_placement(api, "pool attribute", r, value, asked, domains > 1 ? asked : -1);
}

Placement pool_placement_unlocalized(const DriverApi& api, CUmemoryPool pool) {
    return pool_placement(api, pool, -1, 1);
}

std::optional<CUmemLocation> pool_location(const DriverApi& api, CUmemoryPool pool) {
    if (api.cuMemPoolGetAttribute == nullptr) return std::nullopt;
    int type = 0, id = 0;
    if (api.cuMemPoolGetAttribute(pool, static_cast<CUmemPool_attribute>(locality::kPoolAttrLocationType), &type) !=
            CUDA_SUCCESS ||
        api.cuMemPoolGetAttribute(pool, static_cast<CUmemPool_attribute>(locality::kPoolAttrLocationId), &id) !=
            CUDA_SUCCESS) {
        return std::nullopt;
    }
    return CUmemLocation{static_cast<CUmemLocationType>(type), id};
}

nlohmann::json decoded_location_json(const CUmemLocation& location) {
    const int device = location_device(location);
    const int domain = location_domain(location);
    return {{"location", location_name(location)},
            {"location_id", location.id},
            {"location_device", device < 0 ? nlohmann::json(nullptr) : nlohmann::json(device)},
            {"locality_domain", domain < 0 ? nlohmann::json(nullptr) : nlohmann::json(domain)}};
}

std::string placement_text(const Placement& p) {
    const std::string where =
        p.expected < 0 ? std::string("-1, the whole device") : fmt::format("domain {}", p.expected);
    if (p.confirmed()) return fmt::format("confirmed: {} ({})", where, p.source);
    if (!p.value) return fmt::format("unconfirmed: the {} was refused ({})", p.source, p.refusal);
    return fmt::format("unconfirmed: the {} answered {}, expected {}", p.source, *p.value, p.expected);
}

nlohmann::json placement_json(const Placement& p) {
    return {{"state", p.confirmed() ? "confirmed" : "unconfirmed"},
            {"source", p.source},
            {"asked_domain", p.asked},
            {"expected", p.expected},
            {"raw", p.value ? nlohmann::json(*p.value) : nlohmann::json(nullptr)},
            {"refusal", p.refusal.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.refusal)}};
}

}  // namespace cumemctl::gpu
