// The fake driver's CUDA 13.4 locality domains: location type 6 (device byte 0, domain byte 1 of the id),
// the domain attributes of the profile (149 count, 157 SMs per domain, 161 RDMA with localized memory),
// the pointer and pool attributes, the SM split and green contexts, and a per-domain bandwidth that
// the check kernel is charged (profile "locality": {"local_gbps", "remote_gbps"}). A driver below 13.4
// answers granularity for type 6 as device memory and refuses everything else, as the H200's 13.0 did.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fake_state.hpp"

namespace fake {

// The values of shared/cuda-13.4-locality.md, by number (the fake compiles against the 13.0 cuda.h).
inline constexpr int kLocalized = 6;
inline constexpr int kAttrDomainCount = 149;
inline constexpr int kAttrSmsPerDomain = 157;
inline constexpr int kAttrRdmaWithLocalized = 161;
inline constexpr int kPointerAttrDomain = 24;
inline constexpr int kPoolAttrDomain = 15;
inline constexpr unsigned short kUsageRdmaOverPcie = 0x4;

// Whether a location is of the localized type.
inline bool is_localized(const CUmemLocation& loc) {
    return static_cast<int>(loc.type) == kLocalized;
}
// The device a location's memory lives on: DEVICE's id, a localized location's device byte; -1 otherwise.
int location_device(const CUmemLocation& loc);
// The device for the driver's checks of a location: location_device, else 0 (host memory is answered
// for the system by device 0).
inline int checked_device(const CUmemLocation& loc) {
    const int d = location_device(loc);
    return d < 0 ? 0 : d;
}
// A device's domain count (attribute 149), 1 where the profile does not give one.
int domain_count(int ordinal);
// The driver's checks of a localized location for cuMemCreate and pools: a 13.4 driver, zero reserved
// bytes, a device that exists and a domain below its count (CUDA_ERROR_INVALID_VALUE otherwise).
CUresult check_localized(const CUmemLocation& loc);
// The location the driver reports for memory made at `loc`: on a one-domain device a localized location
// is the whole device (type DEVICE), as the 13.4 documentation says; anything else as asked.
CUmemLocation granted_location(const CUmemLocation& loc);
// The domain a granted location is localized to, -1 where it is not.
int granted_domain(const CUmemLocation& loc);

// The locality domain whose SMs the current context has (a green context made from a domain's split),
// -1 for a primary context or a green context of the whole device.
int current_context_domain();

// Charges a kernel that read `bytes` at `ptr` from the current context the time the profile's
// per-domain bandwidth gives, in place of the `spent_ns` the host took, on the clock events read
// (event_clock_offset_ns). Nothing where the device's profile has no "locality" bandwidth. Caller
// holds state().mutex.
void charge_read(std::uintptr_t ptr, std::size_t bytes, std::int64_t spent_ns);
// Nanoseconds the charged reads have added to the events' clock.
std::int64_t event_clock_offset_ns();

}  // namespace fake
