// vmm_create.cpp through the fake driver behind the real seam, with every driver call it makes failed
// in turn: each failure is reported with its call and leaves nothing behind (every create, reserve and
// map undone; free memory as before).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "fake_driver.hpp"
#include "gpu/vmm/vmm_create.hpp"
#include "hooked_api.hpp"
#include "running_command.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;
using testing_driver::hooks;
using testing_settings::RunningCommand;

namespace {

const DriverApi& hooked_api() {
    static const DriverApi api = testing_driver::hooked(testing_driver::fake_driver().api());
    return api;
}

// Map, verify and export (posix-fd): every step create has but the second process.
CreateRequest full_request() {
    CreateRequest r;
    r.device = 1;
    r.size = 4 << 20;
    r.memory.handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    r.map = r.verify = r.export_handle = true;
    return r;
}

// What was made and not undone, by kind; all zero when nothing leaked.
std::map<std::string, int> undone() {
    const auto& h = hooks();
    return {{"allocations", h.ok("cuMemCreate") - h.ok("cuMemRelease")},
            {"reservations", h.ok("cuMemAddressReserve") - h.ok("cuMemAddressFree")},
            {"mappings", h.ok("cuMemMap") - h.ok("cuMemUnmap")},
            {"contexts", h.ok("cuDevicePrimaryCtxRetain") - h.ok("cuDevicePrimaryCtxRelease")}};
}

const std::map<std::string, int> kNothing{{"allocations", 0}, {"reservations", 0}, {"mappings", 0}, {"contexts", 0}};

// The free memory of device 1 seen from outside create.
std::size_t free_memory() {
    testing_driver::use_fake_device(1);
    const std::size_t free = testing_driver::fake_free_memory();
    testing_driver::fake_driver().api().cuCtxSetCurrent(nullptr);
    return free;
}

// The free memory of every device of the profile, added up.
std::size_t all_free_memory() {
    std::size_t free = 0;
    for (int d = 0; d < 4; ++d) {
        testing_driver::use_fake_device(d);
        free += testing_driver::fake_free_memory();
    }
    testing_driver::fake_driver().api().cuCtxSetCurrent(nullptr);
    return free;
}

}  // namespace

TEST_CASE("run_create creates, maps, verifies, exports and releases, every step timed") {
    const std::size_t before = free_memory();
    hooks() = {};
    CreateResult result;
    run_create(hooked_api(), full_request(), result);
    CHECK(undone() == kNothing);
    CHECK(free_memory() == before);
    CHECK(result.size == 4 << 20);
    REQUIRE(result.granted);
    CHECK(result.granted->requestedHandleTypes == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    REQUIRE(result.verify);
    CHECK(result.verify->ok());
    REQUIRE(result.exported);
    CHECK(result.exported->fd >= 0);
    REQUIRE(result.before);
    REQUIRE(result.after);
    CHECK(compare(*result.before, *result.after).balanced());
    std::string names;
    for (const auto& s : result.steps) names += s.name + " ";
    CHECK(names ==
          "context snapshot granularity create properties reserve map access verify export unmap free-address "
          "release unload-kernels snapshot ");
}

TEST_CASE("run_create refuses a size off the granularity before cuMemCreate, and rounds it when asked") {
    hooks() = {};
    CreateRequest r = full_request();
    r.size = 12345;
    CreateResult result;
    try {
        const RunningCommand core_words;
        run_create(hooked_api(), r, result);
        FAIL("accepted");
    } catch (const Error& e) {
        CHECK(e.exit_code() == ExitCode::usage);
        CHECK(e.problem().cause.find("2 MiB (2097152 bytes) and 4 MiB (4194304 bytes)") != std::string::npos);
        CHECK(e.problem().remedy == "give one of those sizes, or add rounding up to the granularity");
    }
    try {
        const RunningCommand create_flags(Command::create);
        run_create(hooked_api(), r, result);
        FAIL("accepted");
    } catch (const Error& e) {
        CHECK(e.problem().remedy == "give one of those sizes, or add --round-up");
    }
    CHECK(hooks().calls.count("cuMemCreate") == 0);
    CHECK(undone() == kNothing);
    r.round_up = true;
    CreateResult rounded;
    run_create(hooked_api(), r, rounded);
    CHECK(rounded.size == 2 << 20);
}

// The calls create makes on the way out, after its work, whose failure it may leave unreported (it
// reports the work): releasing the primary context, making the context that was current current again
// (cuCtxGetDevice asks which one), destroying verify's events and stream, and freeing verify's counter
// buffers (which the snapshots count as a handle lost, below).
const std::set<std::string> kCreateUnreported{"cuCtxGetDevice", "cuCtxSetCurrent", "cuDevicePrimaryCtxRelease",
                                              "cuEventDestroy", "cuStreamDestroy", "cuMemFree"};

// Runs `request` once cleanly, then once for every driver call it made, failing that call: each
// failure is reported with its call (or is one of kCreateUnreported) and leaves nothing behind.
static void fail_every_call(const CreateRequest& request) {
    hooks() = {};
    CreateResult clean;
    run_create(hooked_api(), request, clean);
    const std::map<std::string, int> calls = hooks().calls;
    int failed_runs = 0;
    // Named, not structured, bindings: doctest's CAPTURE is a lambda, and clang before 16 cannot capture
    // a structured binding.
    for (const auto& call : calls) {
        const std::string& name = call.first;
        for (int nth = 1; nth <= call.second; ++nth) {
            CAPTURE(name);
            CAPTURE(nth);
            const std::size_t before = free_memory();
            const std::size_t all_before = all_free_memory();
            hooks() = {};
            hooks().fail_call = name;
            hooks().fail_nth = nth;
            CreateResult result;
            std::optional<Problem> thrown;
            try {
                run_create(hooked_api(), request, result);
            } catch (const Error& e) {
                thrown = e.problem();
            }
            // Outside the catch: a failed call is thrown with the driver's answer for it, or it is one of
            // the calls on the way out whose failure create may leave unreported.
            if (thrown) {
                ++failed_runs;
                CHECK(!thrown->message.empty());
                CHECK(!thrown->remedy.empty());
                REQUIRE(thrown->driver);
                CHECK(thrown->driver->call == name);
            } else {
                CHECK_MESSAGE(kCreateUnreported.count(name) == 1,
                              "create went on past a failed call it makes and checks");
            }
            if (name == "cuMemFree") {
                // The driver refused to free a verify counter buffer (freed on the way out, not
                // retried): the memory is gone. create's own snapshots say so from what this process
                // made (a handle its guard could not give back), whichever device's buffer it was;
                // device free memory is shown only: the first is the owner's, later ones a peer's.
                REQUIRE(result.after);
                CHECK(compare(*result.before, *result.after).lost_handles == 1);
                CHECK_FALSE(compare(*result.before, *result.after).balanced());
                if (nth == 1) CHECK(compare(*result.before, *result.after).free_bytes < 0);
                if (nth > 1) CHECK(compare(*result.before, *result.after).free_bytes == 0);
                CHECK(all_free_memory() < all_before);
                continue;
            }
            std::map<std::string, int> left = undone();
            if (name == "cuDevicePrimaryCtxRelease") left["contexts"] = 0;  // refused on the way out
            CHECK(left == kNothing);
            CHECK(free_memory() == before);
        }
    }
    // And the failures took: nearly every step's call, failed, failed create.
    CHECK(failed_runs >= static_cast<int>(clean.steps.size()) - 2);
}

TEST_CASE("every driver call of create that fails is reported and leaves nothing behind") {
    fail_every_call(full_request());
}

// full_request with devices 0 and 3 granted access too (all peers in the gb200x4 profile).
static CreateRequest access_request() {
    CreateRequest r = full_request();
    r.access = {0, 3};
    return r;
}

TEST_CASE("run_create with access grants each device, reads it back and checks the pattern from each peer") {
    const std::size_t before = free_memory();
    hooks() = {};
    CreateResult result;
    run_create(hooked_api(), access_request(), result);
    CHECK(undone() == kNothing);
    CHECK(free_memory() == before);
    REQUIRE(result.access.size() == 3);
    CHECK(result.access[0].device == 1);
    CHECK(!result.access[0].peer);
    CHECK(result.access[1].device == 0);
    CHECK(result.access[2].device == 3);
    for (const auto& a : result.access) CHECK(a.flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    REQUIRE(result.peer_checks.size() == 2);
    CHECK(result.peer_checks[0].device == 0);
    CHECK(result.peer_checks[1].device == 3);
    for (const auto& c : result.peer_checks) {
        CHECK(c.check.ok());
        CHECK(c.check.bytes == 4 << 20);
    }
    CHECK(hooks().ok("cuMemSetAccess") == 1);  // one call, three descriptors
    CHECK(hooks().ok("cuDeviceCanAccessPeer") == 2);
}

TEST_CASE("every driver call of create with access that fails is reported and leaves nothing behind") {
    fail_every_call(access_request());
}
