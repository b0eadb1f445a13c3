#include <doctest/doctest.h>

#include "units.hpp"

#include "cuda/owned_handle.hpp"
#include "fake_driver.hpp"
#include "gpu/pool/pool_access.hpp"
#include "gpu/pool/pool_pattern.hpp"
#include "gpu/pool/pool_workload.hpp"
#include "hooked_api.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;
using testing_driver::hooks;
using testing_units::MiB;

namespace {

const DriverApi& workload_api() {
    static const DriverApi api = testing_driver::hooked(testing_driver::fake_driver().api());
    return api;
}

// The hooked table, except that every cuMemFreeAsync is refused: blocks the driver will not free.
const DriverApi& refusing_free_api() {
    static const DriverApi api = [] {
        DriverApi a = workload_api();
        a.cuMemFreeAsync = [](CUdeviceptr, CUstream) { return CUDA_ERROR_INVALID_VALUE; };
        return a;
    }();
    return api;
}

// Runs 4x2MiB on a new pool of device 0 and returns the error the workload threw.
std::optional<Error> workload_error(const DriverApi& api) {
    testing_driver::use_fake_device(0);
    OwnedPool pool(testing_driver::fake_driver().api(), 0, PoolRequest{});
    try {
        run_workload(api, pool.handle(), parse_workload_pattern("4x2MiB"), true);
    } catch (const Error& e) {
        return e;
    }
    return std::nullopt;
}
}  // namespace

TEST_CASE("run_workload frees every block it allocated when an allocation fails") {
    hooks() = {};
    hooks().fail_call = "cuMemAllocFromPoolAsync";
    hooks().fail_nth = 3;
    hooks().fail_result = CUDA_ERROR_OUT_OF_MEMORY;
    const std::uint64_t lost = lost_handle_count();
    const auto e = workload_error(workload_api());
    REQUIRE(e);
    REQUIRE(e->problem().driver);
    CHECK(e->problem().driver->call == "cuMemAllocFromPoolAsync");
    CHECK(hooks().ok("cuMemAllocFromPoolAsync") == 2);
    CHECK(hooks().ok("cuMemFreeAsync") == 2);
    CHECK(lost_handle_count() == lost);
}

TEST_CASE("run_workload counts the blocks the driver refused to free on its way out") {
    hooks() = {};
    hooks().fail_call = "cuMemAllocFromPoolAsync";
    hooks().fail_nth = 4;
    const std::uint64_t lost = lost_handle_count();
    const auto e = workload_error(refusing_free_api());
    REQUIRE(e);
    CHECK(hooks().ok("cuMemAllocFromPoolAsync") == 3);
    // Three blocks were held when the fourth allocation failed; the driver refused each free.
    CHECK(lost_handle_count() == lost + 3);
}
