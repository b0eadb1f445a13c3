#include <doctest/doctest.h>

#include <map>
#include <tuple>

#include "driver_table.hpp"
#include "gpu/device/granularity.hpp"
#include "gpu/diagnosis/diagnosis.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;

namespace {

// The driver's granularity answers: (location type, handle types) -> result and sizes.
struct Answer {
    CUresult result = CUDA_SUCCESS;
    size_t minimum = 0;
    size_t recommended = 0;
};
std::map<std::pair<int, unsigned>, Answer>& answers() {
    static std::map<std::pair<int, unsigned>, Answer> a;
    return a;
}
int granularity_calls = 0;

DriverApi granularity_table_api() {
    auto api = testing_driver::table();
    api.cuMemGetAllocationGranularity = [](size_t* g, const CUmemAllocationProp* p,
                                           CUmemAllocationGranularity_flags f) {
        ++granularity_calls;
        const auto it = answers().find({static_cast<int>(p->location.type), p->requestedHandleTypes});
        if (it == answers().end()) return CUDA_ERROR_INVALID_VALUE;
        if (it->second.result != CUDA_SUCCESS) return it->second.result;
        *g = f == CU_MEM_ALLOC_GRANULARITY_RECOMMENDED ? it->second.recommended : it->second.minimum;
        return CUDA_SUCCESS;
    };
    return api;
}

}  // namespace

TEST_CASE("allocation_granularity asks for the minimum and the recommended granularity") {
    answers() = {{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, {CUDA_SUCCESS, 2 << 20, 4 << 20}}};
    const auto api = granularity_table_api();
    CUmemAllocationProp p{};
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    const Granularity g = allocation_granularity(api, p);
    CHECK(g.minimum == 2 << 20);
    CHECK(g.recommended == 4 << 20);
    p.location.type = CU_MEM_LOCATION_TYPE_HOST;
    CHECK_THROWS_AS(allocation_granularity(api, p), Error);
}

TEST_CASE("granularity_table answers, refuses with a diagnosis, or skips each combination") {
    auto& m = testing_driver::model();
    m = testing_driver::Model{};
    m.device_count = 2;
    m.attrs = {{CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, -1},
               {CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1},
               {CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0}};
    answers() = {{{CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_HANDLE_TYPE_NONE}, {CUDA_SUCCESS, 2 << 20, 2 << 20}},
                 {{CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_HANDLE_TYPE_FABRIC}, {CUDA_ERROR_NOT_SUPPORTED, 0, 0}}};
    const auto api = granularity_table_api();
    GranularitySelection s;
    s.locations = parse_location_list("device,host-numa");
    s.handle_types = parse_handle_type_list("none,fabric");
    s.flag_sets = single_flag_sets();
    granularity_calls = 0;
    const auto rows =
        granularity_table(api, {0, 1}, s, [&](Problem& problem, int device, const CUmemAllocationProp& prop) {
            DiagnosisContext context;
            context.device = device;
            context.prop = prop;
            diagnose_problem(api, problem, context);
        });
    REQUIRE(rows.size() == 2 * 2 * 2 * 4);
    // Skipped rows make no driver call: 2 devices x device location x 2 handle types x 4 flag sets,
    // each asking minimum (and, when it answers, recommended).
    CHECK(granularity_calls == 2 * 4 * (2 + 1));
    const GranularityRow& ok = rows[0];
    CHECK(ok.device == 0);
    CHECK(ok.status == GranularityRow::Status::ok);
    CHECK(ok.granularity.minimum == 2 << 20);
    CHECK(ok.location->id == 0);
    const GranularityRow& refused = rows[4];
    CHECK(refused.request.handle_type == CU_MEM_HANDLE_TYPE_FABRIC);
    CHECK(refused.status == GranularityRow::Status::refused);
    REQUIRE(refused.problem);
    CHECK(refused.problem->driver->name == "CUDA_ERROR_OTHER");
    CHECK(refused.problem->cause.find("CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 0") != std::string::npos);
    const GranularityRow& skipped = rows[8];
    CHECK(skipped.status == GranularityRow::Status::skipped);
    CHECK_FALSE(skipped.location.has_value());
    CHECK(skipped.problem->message.find("CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID is -1") != std::string::npos);
    CHECK(rows[16].device == 1);
    CHECK(granularity_status_name(skipped.status) == "skipped");
}

TEST_CASE("single_flag_sets is no flag, then each flag alone") {
    const auto sets = single_flag_sets();
    REQUIRE(sets.size() == 4);
    CHECK(flag_names(sets[0]).empty());
    CHECK(flag_names(sets[1]) == std::vector<std::string>{"compression"});
    CHECK(flag_names(sets[2]) == std::vector<std::string>{"rdma"});
    CHECK(flag_names(sets[3]) == std::vector<std::string>{"tile-pool"});
}
