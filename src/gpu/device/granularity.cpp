#include "gpu/device/granularity.hpp"

#include "base/enum_words.hpp"
#include "cuda/driver_call.hpp"
#include "gpu/device/locality.hpp"

namespace cumemctl::gpu {

Granularity allocation_granularity(const DriverApi& api, const CUmemAllocationProp& prop) {
    Granularity g;
    std::size_t value = 0;
    CU_CALL(api, cuMemGetAllocationGranularity, &value, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    g.minimum = value;
    CU_CALL(api, cuMemGetAllocationGranularity, &value, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    g.recommended = value;
    return g;
}

std::vector<MemoryRequest> single_flag_sets() {
    std::vector<MemoryRequest> sets(4);
    sets[1].compression = true;
    sets[2].rdma = true;
    sets[3].tile_pool = true;
    return sets;
}

namespace {

GranularityRow query_row(const DriverApi& api, int device, const MemoryRequest& request,
                         const RefusalDiagnoser& diagnose) {
    GranularityRow row;
    row.device = device;
    row.request = request;
    CUmemAllocationProp prop{};
    try {
        prop = allocation_prop(api, request, device);
    } catch (const Error& e) {
        row.status = GranularityRow::Status::skipped;
        row.problem = e.problem();
        return row;
    }
    row.location = prop.location;
    try {
        row.granularity = allocation_granularity(api, prop);
    } catch (const Error& e) {
        row.status = GranularityRow::Status::refused;
        row.problem = e.problem();
        if (diagnose) diagnose(*row.problem, device, prop);
    }
    return row;
}

}  // namespace

std::vector<GranularityRow> granularity_table(const DriverApi& api, const std::vector<int>& devices,
                                              const GranularitySelection& selection, const RefusalDiagnoser& diagnose) {
    // Locality domains are checked first, for every device, so that a driver without them (exit 3)
    // or a domain the device lacks (exit 2) stops the command before any row: the 13.0 driver answers
    // the granularity of a localized location and then refuses cuMemCreate, so a row would mislead.
    for (int device : devices) {
        for (const auto& location : selection.locations) {
            if (location.domain) localized_location(api, device, *location.domain);
        }
    }
    std::vector<GranularityRow> rows;
    for (int device : devices) {
        for (const auto& location : selection.locations) {
            for (const auto type : selection.handle_types) {
                for (MemoryRequest request : selection.flag_sets) {
                    request.location = location;
                    request.handle_type = type;
                    rows.push_back(query_row(api, device, request, diagnose));
                }
            }
        }
    }
    return rows;
}

namespace {

constexpr auto kGranularityStatusWords =
    enum_words<GranularityRow::Status>({{GranularityRow::Status::ok, "ok"},
                                        {GranularityRow::Status::refused, "refused"},
                                        {GranularityRow::Status::skipped, "skipped"}},
                                       "ok");

}  // namespace

std::string granularity_status_name(GranularityRow::Status status) {
    return std::string(kGranularityStatusWords.word(status));
}

}  // namespace cumemctl::gpu
