// PrimaryContext, a guard of two parts: the retained context (an OwnedHandle, released last) and the
// context current before it (made current again first), on every way out of the constructor and at
// its end.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cuda/owned_handle.hpp"
#include "driver_table.hpp"
#include "gpu/device/primary_context.hpp"

using namespace cumemctl;

namespace {

// The context calls a test's table saw, in order; what cuCtxSetCurrent and the release answer.
std::vector<std::string> calls;
CUresult set_current_result = CUDA_SUCCESS;
CUresult release_result = CUDA_SUCCESS;
const CUcontext kPrevious = reinterpret_cast<CUcontext>(0x2);  // NOLINT(performance-no-int-to-ptr)

std::string name_of(CUcontext c) {
    return c == kPrevious ? "previous" : c == nullptr ? "none" : "primary";
}

// The unit tests' table with the context calls recorded; another context (kPrevious) is current.
DriverApi recording_table() {
    calls.clear();
    set_current_result = CUDA_SUCCESS;
    release_result = CUDA_SUCCESS;
    testing_driver::model() = testing_driver::Model{};
    DriverApi api = testing_driver::table();
    api.cuCtxGetCurrent = [](CUcontext* c) {
        *c = kPrevious;
        return CUDA_SUCCESS;
    };
    api.cuDevicePrimaryCtxRetain = [](CUcontext* c, CUdevice d) {
        calls.push_back("retain " + std::to_string(d));
        if (testing_driver::model().retain_result != CUDA_SUCCESS) return testing_driver::model().retain_result;
        *c = reinterpret_cast<CUcontext>(0x1);  // NOLINT(performance-no-int-to-ptr)
        return CUDA_SUCCESS;
    };
    api.cuCtxSetCurrent = [](CUcontext c) {
        calls.push_back("set current " + name_of(c));
        return c == kPrevious ? CUDA_SUCCESS : set_current_result;
    };
    api.cuDevicePrimaryCtxRelease = [](CUdevice d) {
        calls.push_back("release " + std::to_string(d));
        return release_result;
    };
    return api;
}

}  // namespace

TEST_CASE("PrimaryContext makes the previous context current again, then releases its own") {
    const DriverApi api = recording_table();
    {
        const gpu::PrimaryContext context(api, 1);
        CHECK(context.device() == 1);
        CHECK(context.get() != nullptr);
        CHECK(calls == std::vector<std::string>{"retain 1", "set current primary"});
    }
    CHECK(calls == std::vector<std::string>{"retain 1", "set current primary", "set current previous", "release 1"});
}

TEST_CASE("a PrimaryContext that cannot be made current releases what it retained and names the call") {
    const DriverApi api = recording_table();
    set_current_result = CUDA_ERROR_INVALID_CONTEXT;
    try {
        const gpu::PrimaryContext context(api, 0);
        FAIL("cuCtxSetCurrent failed, and the guard was made");
    } catch (const Error& e) {
        REQUIRE(e.problem().driver.has_value());
        CHECK(e.problem().driver->call == "cuCtxSetCurrent");
    }
    // Nothing was made current, so nothing is restored; the retained context is released.
    CHECK(calls == std::vector<std::string>{"retain 0", "set current primary", "release 0"});
}

TEST_CASE("a refused retain releases nothing, restores nothing, and names its device") {
    const DriverApi api = recording_table();
    testing_driver::model().retain_result = CUDA_ERROR_OUT_OF_MEMORY;
    try {
        const gpu::PrimaryContext context(api, 3);
        FAIL("cuDevicePrimaryCtxRetain failed, and the guard was made");
    } catch (const Error& e) {
        CHECK(e.problem().device == 3);
    }
    CHECK(calls == std::vector<std::string>{"retain 3"});
}

TEST_CASE("a primary context whose release the driver refuses is counted as lost, as every guard counts it") {
    const DriverApi api = recording_table();
    release_result = CUDA_ERROR_INVALID_CONTEXT;
    const std::uint64_t start = lost_handle_count();
    { const gpu::PrimaryContext context(api, 0); }
    CHECK(lost_handle_count() == start + 1);
    release_result = CUDA_SUCCESS;
    { const gpu::PrimaryContext context(api, 0); }
    CHECK(lost_handle_count() == start + 1);
}
