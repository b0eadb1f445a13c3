#include <doctest/doctest.h>

#include "gpu/device/memory_props.hpp"
#include "base/error.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;

namespace {
ExitCode code_of(void (*fn)()) {
    try {
        fn();
    } catch (const Error& e) {
        return e.exit_code();
    }
    return ExitCode::ok;
}
}  // namespace

TEST_CASE("parse_location_list reads lists, all, and refuses what is not a location") {
    const auto all = parse_location_list("all");
    REQUIRE(all.size() == 3);
    CHECK(location_spec_name(all[0]) == "device");
    CHECK(location_spec_name(all[1]) == "host");
    CHECK(location_spec_name(all[2]) == "host-numa");
    const auto some = parse_location_list("host-numa:1,device,host-numa:1,host-numa");
    REQUIRE(some.size() == 3);
    CHECK(location_spec_name(some[0]) == "host-numa:1");
    CHECK(some[0].numa_node == 1);
    CHECK(location_spec_name(some[1]) == "device");
    CHECK_FALSE(some[2].numa_node.has_value());
    CHECK(code_of([] { parse_location_list("device,,host"); }) == ExitCode::usage);
    CHECK(code_of([] { parse_location_list("gpu"); }) == ExitCode::usage);
    CHECK(code_of([] { parse_location_list("host-numa:x"); }) == ExitCode::usage);
    CHECK(code_of([] { parse_location_list(""); }) == ExitCode::usage);
}

TEST_CASE("parse_handle_type_list reads lists and all") {
    CHECK(parse_handle_type_list("all") ==
          std::vector<CUmemAllocationHandleType>{CU_MEM_HANDLE_TYPE_NONE, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                                 CU_MEM_HANDLE_TYPE_FABRIC});
    CHECK(parse_handle_type_list("fabric,none,fabric") ==
          std::vector<CUmemAllocationHandleType>{CU_MEM_HANDLE_TYPE_FABRIC, CU_MEM_HANDLE_TYPE_NONE});
    CHECK(code_of([] { parse_handle_type_list("posix"); }) == ExitCode::usage);
    CHECK(code_of([] { parse_handle_type_list("fabric,"); }) == ExitCode::usage);
}

TEST_CASE("flag names and property descriptions say what was asked") {
    MemoryRequest r;
    CHECK(flag_names(r).empty());
    r.compression = r.tile_pool = true;
    CHECK(flag_names(r) == std::vector<std::string>{"compression", "tile-pool"});
    CUmemAllocationProp p{};
    p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
    p.location.id = 1;
    p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    p.allocFlags.gpuDirectRDMACapable = 1;
    CHECK(flag_names(p) == std::vector<std::string>{"rdma"});
    CHECK(describe_prop(p) == "location host-numa:1, handle type posix-fd, flags rdma");
}
