// Allocation granularity (cuMemGetAllocationGranularity, no context needed): for one property set, and
// the table of every location x handle type x flag set that `cumemctl granularity` reports.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cuda/driver_api.hpp"
#include "gpu/device/memory_props.hpp"
#include "base/error.hpp"

namespace cumemctl::gpu {

// The two granularities the driver gives for a property set, in bytes.
struct Granularity {
    std::uint64_t minimum = 0;      // cuMemCreate sizes must be multiples of this
    std::uint64_t recommended = 0;  // multiples of this perform best
};

// Asks the driver for the minimum and the recommended granularity of `prop`. Throws Error carrying the
// failed call (not yet diagnosed).
Granularity allocation_granularity(const DriverApi& api, const CUmemAllocationProp& prop);

// Which combinations the table holds: every location, handle type and flag set listed (the cross
// product), for each device.
struct GranularitySelection {
    std::vector<LocationSpec> locations;
    std::vector<CUmemAllocationHandleType> handle_types;
    std::vector<MemoryRequest> flag_sets;  // only the flags of each are used
};

// The default flag sets: none, then each flag alone (compression, rdma, tile-pool), as measured.
std::vector<MemoryRequest> single_flag_sets();

// One row: the combination, and the driver's answer or why there is none.
struct GranularityRow {
    enum class Status { ok, refused, skipped };
    int device = 0;
    MemoryRequest request;                  // location as asked, handle type, flags
    std::optional<CUmemLocation> location;  // the driver location; nullopt when it could not be resolved
    Status status = Status::ok;
    Granularity granularity;         // when ok
    std::optional<Problem> problem;  // when refused (diagnosed) or skipped (why)
};

// Explains a combination the driver refused (gpu/diagnosis's diagnose_problem, which the caller passes:
// the diagnosis sits above this folder): the problem, the device and the properties asked for.
using RefusalDiagnoser = std::function<void(Problem& problem, int device, const CUmemAllocationProp& prop)>;

// Queries every combination of the selection on each device, `diagnose` explaining each refusal. Never
// throws for a refused or skipped combination; the row says why.
std::vector<GranularityRow> granularity_table(const DriverApi& api, const std::vector<int>& devices,
                                              const GranularitySelection& selection, const RefusalDiagnoser& diagnose);

// "ok", "refused", "skipped".
std::string granularity_status_name(GranularityRow::Status status);

}  // namespace cumemctl::gpu
