// CUDA 13.4 locality domains: memory placed in one part of a GPU. What a device offers (the domain
// count, the SMs each domain guarantees, RDMA with localized memory, and whether a small localized
// allocation works), the localized location of a device and domain (checked before anything is made),
// locations decoded by their type, and the placement the driver reports, confirmed only where it agrees
// with what was asked. Values from cuda/locality_compat.hpp.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cuda/driver_api.hpp"

namespace cumemctl::gpu {

// Whether a location is localized (CU_MEM_LOCATION_TYPE_DEVICE_LOCALITY_DOMAIN).
bool is_localized(const CUmemLocation& location);
// Whether a location type is device memory: the whole device or one of its locality domains.
bool is_device_memory(CUmemLocationType type);
inline bool is_device_memory(const CUmemLocation& location) {
    return is_device_memory(location.type);
}
// The device whose memory a location names, decoded by type (DEVICE: id; localized: the device byte,
// never id itself, which is device + 256 x domain); -1 for host locations.
int location_device(const CUmemLocation& location);
// The locality domain of a localized location, -1 for any other.
int location_domain(const CUmemLocation& location);

// Why locality is unknown on a driver below 13.4: "driver 13.0; needs 13.4".
std::string locality_unknown_reason(int driver_version);

// What a device offers for locality domains. Below a 13.4 driver every figure is unknown (the
// attributes answer CUDA_ERROR_INVALID_VALUE), never a made-up single domain.
struct LocalityInfo {
    int driver_version = 0;
    std::optional<int> domains;              // CU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_COUNT
    std::optional<int> sms_per_domain;       // ..._LOCALITY_DOMAIN_MULTIPROCESSOR_COUNT: guaranteed per domain
    std::optional<int> sms_total;            // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    std::optional<int> rdma_with_localized;  // ..._GPU_DIRECT_RDMA_WITH_LOCALIZED_MEMORY_SUPPORTED
    // A small localized allocation (one granule at domain 0, released at once): nullopt where not tried.
    // A granularity answer is no proof: the 13.0 driver answers 2 MiB and then refuses cuMemCreate.
    std::optional<bool> allocation_works;
    std::string allocation_detail;  // what the allocation answered

    bool driver_has() const;
    // SMs no domain guarantees: total less domains x per-domain; nullopt where a figure is unknown.
    std::optional<int> sms_left_over() const;
};

// How query_locality shows support: not at all, by a small allocation without a context, or by one
// that may fall back to the device's primary context where the driver wants one.
enum class LocalityProbe { none, no_context, context_if_needed };

// Reads a device's locality attributes (no context); with a probe, on a 13.4 driver with a known
// count, also makes and releases a small localized allocation.
LocalityInfo query_locality(const DriverApi& api, int device, LocalityProbe probe);

// The report's form: domains, SMs per domain, left over, RDMA, the allocation; "unknown" reason below 13.4.
nlohmann::json locality_json(const LocalityInfo& info);

// The localized location of `domain` on `device`, checked before anything is made: the device and the
// domain must each fit in a byte, the driver must be 13.4 or newer and know the count (unavailable,
// exit 3, naming the driver), and the domain must be below the count (usage, exit 2, with the range).
CUmemLocation localized_location(const DriverApi& api, int device, int domain);

// Where the driver says localized memory is: confirmed only when its answer agrees with what was asked
// (the domain on a multi-domain device; -1, the whole device, on a one-domain device), else
// "unconfirmed" with the raw answer. Both attributes are single-source values (locality_compat.hpp).
struct Placement {
    std::string source;        // "pointer attribute" or "pool attribute"
    int asked = 0;             // the domain asked for
    int expected = 0;          // what the attribute should answer: the domain, or -1 on one domain
    std::optional<int> value;  // the raw answer, nullopt where the driver refused the attribute
    std::string refusal;       // the driver's error name where it refused
    bool confirmed() const { return value && *value == expected; }
};

// The placement of localized memory mapped at `ptr` (CU_POINTER_ATTRIBUTE_LOCALITY_DOMAIN_ORDINAL).
Placement pointer_placement(const DriverApi& api, CUdeviceptr ptr, int asked, int domains);
// The placement of a pool made at a localized location (CU_MEMPOOL_ATTR_LOCALITY_DOMAIN_ID).
Placement pool_placement(const DriverApi& api, CUmemoryPool pool, int asked, int domains);
// The attribute answer for memory that is not localized (a default device pool, cuMemAlloc): -1 expected.
Placement pool_placement_unlocalized(const DriverApi& api, CUmemoryPool pool);

// A pool's location as the driver reads it back (CU_MEMPOOL_ATTR_LOCATION_TYPE and _ID, CUDA 13.2),
// nullopt where the driver does not answer them; decode it with location_device and location_domain.
std::optional<CUmemLocation> pool_location(const DriverApi& api, CUmemoryPool pool);
// A location read back, decoded by its type: {location, location_id, location_device, locality_domain}.
nlohmann::json decoded_location_json(const CUmemLocation& location);

// "confirmed: domain 1 (pointer attribute)" or "unconfirmed: pointer attribute answered 0, asked 1".
std::string placement_text(const Placement& p);
nlohmann::json placement_json(const Placement& p);

}  // namespace cumemctl::gpu
