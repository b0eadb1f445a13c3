#include <doctest/doctest.h>

#include "driver_table.hpp"
#include "gpu/device/locality.hpp"
#include "gpu/device/memory_props.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;

namespace {

int driver_version = 13040;

DriverApi locality_api(int version) {
    driver_version = version;
    auto api = testing_driver::table();
    api.cuDriverGetVersion = [](int* v) {
        *v = driver_version;
        return CUDA_SUCCESS;
    };
    return api;
}

ExitCode exit_of(const DriverApi& api, int device, int domain) {
    try {
        localized_location(api, device, domain);
    } catch (const Error& e) {
        return e.exit_code();
    }
    return ExitCode::ok;
}

}  // namespace

TEST_CASE("parse_location takes domain:I, I from 0 to 255, and names it back") {
    const LocationSpec spec = parse_location("domain:3");
    CHECK(static_cast<int>(spec.type) == locality::kLocationType);
    CHECK(spec.domain == 3);
    CHECK(location_spec_name(spec) == "domain:3");
    CHECK(parse_location("domain:255").domain == 255);
    for (const char* bad : {"domain:256", "domain:", "domain:-1", "domain:x"}) {
        CAPTURE(bad);
        try {
            parse_location(bad);
            FAIL("accepted");
        } catch (const Error& e) {
            CHECK(e.exit_code() == ExitCode::usage);
        }
    }
    CHECK(parse_location_list("device,domain:1,domain:1").size() == 2);
}

TEST_CASE("a localized location is decoded by its type: the id is device + 256 x domain") {
    CUmemLocation loc{static_cast<CUmemLocationType>(locality::kLocationType), locality::packed_id(1, 1)};
    CHECK(loc.id == 257);
    CHECK(is_localized(loc));
    CHECK(is_device_memory(loc));
    CHECK(location_device(loc) == 1);
    CHECK(location_domain(loc) == 1);
    CHECK(location_name(loc) == "domain:1");
    const CUmemLocation device{CU_MEM_LOCATION_TYPE_DEVICE, 3};
    CHECK(location_device(device) == 3);
    CHECK(location_domain(device) == -1);
    CHECK_FALSE(is_device_memory(CUmemLocation{CU_MEM_LOCATION_TYPE_HOST_NUMA, 0}));
    CHECK(location_device(CUmemLocation{CU_MEM_LOCATION_TYPE_HOST_NUMA, 0}) == -1);
    CHECK(locality::reserved_clear(loc.id));
    CHECK_FALSE(locality::reserved_clear(loc.id | (1 << 16)));
}

TEST_CASE("localized_location: exit 3 below 13.4 or without a count, exit 2 at or above the count") {
    testing_driver::model() = testing_driver::Model{};
    testing_driver::model().attrs[locality::kAttrDomainCount] = 2;
    CHECK(exit_of(locality_api(13000), 0, 0) == ExitCode::unavailable);
    const auto api = locality_api(13040);
    CHECK(exit_of(api, 0, 1) == ExitCode::ok);
    CHECK(exit_of(api, 0, 2) == ExitCode::usage);
    CHECK(exit_of(api, 0, 256) == ExitCode::usage);
    CHECK(exit_of(api, 256, 0) == ExitCode::unavailable);
    const CUmemLocation loc = localized_location(api, 0, 1);
    CHECK(loc.id == locality::packed_id(0, 1));
    testing_driver::model().attrs.erase(locality::kAttrDomainCount);
    CHECK(exit_of(api, 0, 0) == ExitCode::unavailable);
}

TEST_CASE("query_locality asks nothing of a driver below 13.4 and says why") {
    testing_driver::model() = testing_driver::Model{};
    testing_driver::model().attrs[locality::kAttrDomainCount] = 2;  // a value that must not be read
    const LocalityInfo info = query_locality(locality_api(13000), 0, LocalityProbe::context_if_needed);
    CHECK_FALSE(info.driver_has());
    CHECK_FALSE(info.domains);
    CHECK_FALSE(info.allocation_works);
    CHECK(locality_json(info)["unknown_reason"] == "driver 13.0; needs 13.4");
    CHECK(locality_unknown_reason(12040) == "driver 12.4; needs 13.4");
}

TEST_CASE("placement is confirmed only where the answer is what was asked") {
    Placement p{"pointer attribute", 1, 1, 1, {}};
    CHECK(p.confirmed());
    CHECK(placement_text(p) == "confirmed: domain 1 (pointer attribute)");
    p.value = 0;
    CHECK_FALSE(p.confirmed());
    CHECK(placement_text(p) == "unconfirmed: the pointer attribute answered 0, expected 1");
    p.value.reset();
    p.refusal = "CUDA_ERROR_INVALID_VALUE";
    CHECK(placement_json(p)["state"] == "unconfirmed");
    CHECK(placement_json(p)["raw"].is_null());
    const Placement one{"pool attribute", 0, -1, -1, {}};
    CHECK(one.confirmed());
    CHECK(placement_text(one) == "confirmed: -1, the whole device (pool attribute)");
}
