#include <doctest/doctest.h>

#include "units.hpp"

#include <string>
#include <vector>

#include "driver_table.hpp"
#include "running_command.hpp"
#include "gpu/le/logical_endpoint_bind.hpp"
#include "gpu/le/logical_endpoint_diagnosis.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;

using testing_settings::RunningCommand;
using testing_units::GiB;
using testing_units::MiB;

namespace {

// What the logical endpoint lambdas answer, and the calls they saw in order.
struct LeModel {
    int polls_needed = 2;  // Query says constructed on this poll; -1 never
    int polls = 0;
    CUresult query_result = CUDA_SUCCESS;
    CUresult bind_result = CUDA_SUCCESS;
    CUresult unbind_result = CUDA_SUCCESS;
    std::vector<std::string> calls;
};

LeModel& model_le() {
    static LeModel m;
    return m;
}

CUresult seen(const char* call, CUresult r = CUDA_SUCCESS) {
    model_le().calls.emplace_back(call);
    return r;
}

// The unit-test table with the logical endpoint family and the memory calls le-bind makes.
DriverApi le_table() {
    DriverApi api = testing_driver::table();
    api.cuLogicalEndpointIdReserve = [](CUlogicalEndpointId* base, cuuint32_t) {
        *base = 7;
        return seen("IdReserve");
    };
    api.cuLogicalEndpointIdRelease = [](CUlogicalEndpointId, cuuint32_t) { return seen("IdRelease"); };
    api.cuLogicalEndpointCreate = [](CUlogicalEndpointId, const CUlogicalEndpointProp*) { return seen("Create"); };
    api.cuLogicalEndpointAddDevice = [](CUlogicalEndpointId, CUdevice) { return seen("AddDevice"); };
    api.cuLogicalEndpointQuery = [](CUlogicalEndpointId, cuuint32_t, int* status) {
        ++model_le().polls;
        *status = model_le().polls_needed >= 0 && model_le().polls >= model_le().polls_needed ? 1 : 0;
        return seen("Query", model_le().query_result);
    };
    api.cuLogicalEndpointGetLimits = [](cuuint64_t* align, cuuint64_t* max, const CUlogicalEndpointProp*) {
        *align = 2 * MiB;
        *max = 64 * MiB;
        return seen("GetLimits");
    };
    api.cuLogicalEndpointBindMem = [](CUlogicalEndpointId, CUdevice, cuuint64_t, CUmemGenericAllocationHandle,
                                      cuuint64_t, cuuint64_t,
                                      unsigned long long) { return seen("BindMem", model_le().bind_result); };
    api.cuLogicalEndpointBindAddr = [](CUlogicalEndpointId, CUdevice, cuuint64_t, void*, cuuint64_t,
                                       unsigned long long) { return seen("BindAddr"); };
    api.cuLogicalEndpointUnbind = [](CUlogicalEndpointId, CUdevice, cuuint64_t, cuuint64_t) {
        return seen("Unbind", model_le().unbind_result);
    };
    api.cuLogicalEndpointExport = [](void*, CUlogicalEndpointId, CUlogicalEndpointIpcHandleType) {
        return seen("Export");
    };
    api.cuLogicalEndpointImport = [](CUlogicalEndpointId, const void*, CUlogicalEndpointIpcHandleType) {
        return seen("Import");
    };
    api.cuLogicalEndpointDestroy = [](CUlogicalEndpointId) { return seen("Destroy"); };
    api.cuMemGetAllocationGranularity = [](size_t* g, const CUmemAllocationProp*, CUmemAllocationGranularity_flags) {
        *g = 2 * MiB;
        return seen("Granularity");
    };
    api.cuMemCreate = [](CUmemGenericAllocationHandle* h, size_t, const CUmemAllocationProp*, unsigned long long) {
        *h = 0x99;
        return seen("MemCreate");
    };
    api.cuMemRelease = [](CUmemGenericAllocationHandle) { return seen("MemRelease"); };
    return api;
}

void reset() {
    model_le() = LeModel{};
    testing_driver::model() = testing_driver::Model{};
    testing_driver::model().attrs = {{le::kAttrUnicastSupported, 1},
                                     {le::kAttrMulticastSupported, 1},
                                     {le::kAttrCountedOpsSupported, 1},
                                     {le::kAttrUnicastAccessOnOwnerSupported, 1}};
}

LeBindRequest unicast(std::uint64_t size) {
    LeBindRequest r;
    r.devices = {0};
    r.size = size;
    return r;
}

using Calls = std::vector<std::string>;

}  // namespace

TEST_CASE("poll_constructed polls until the endpoint is constructed and counts the polls") {
    reset();
    model_le().polls_needed = 3;
    const auto api = le_table();
    const LeQueryWait w = poll_constructed(api, 7, 1, std::chrono::seconds(5));
    CHECK(w.constructed);
    CHECK(w.polls == 3);
    CHECK(w.waited_seconds < 5);
}

TEST_CASE("poll_constructed gives up at the deadline and says how long it waited") {
    reset();
    model_le().polls_needed = -1;
    const auto api = le_table();
    const LeQueryWait w = poll_constructed(api, 7, 1, std::chrono::milliseconds(30));
    CHECK_FALSE(w.constructed);
    CHECK(w.polls >= 2);
    CHECK(w.waited_seconds >= 0.03);
    CHECK(w.waited_seconds < 1.0);
    // A zero timeout still asks once.
    reset();
    model_le().polls_needed = -1;
    CHECK(poll_constructed(api, 7, 1, std::chrono::seconds(0)).polls == 1);
}

TEST_CASE("poll_constructed reports a failing Query as the driver's error") {
    reset();
    model_le().query_result = CUDA_ERROR_ILLEGAL_STATE;
    const auto api = le_table();
    try {
        poll_constructed(api, 7, 1, std::chrono::seconds(1));
        FAIL("did not throw");
    } catch (const Error& e) {
        REQUIRE(e.problem().driver.has_value());
        CHECK(e.problem().driver->call == "cuLogicalEndpointQuery");
    }
}

TEST_CASE("the round trip undoes everything in reverse: unbind, destroy, release the ID, release memory") {
    reset();
    const Driver driver = Driver::from_table(le_table(), 13030);
    LeBindOutcome out;
    run_le_bind(driver, unicast(4 * MiB), out);
    CHECK(model_le().calls == Calls{"GetLimits", "Granularity", "IdReserve", "Create", "Query", "Query", "MemCreate",
                                    "BindMem", "Unbind", "Destroy", "IdRelease", "MemRelease"});
    CHECK(out.completed);
    CHECK(out.query->polls == 2);
    CHECK(out.plan->bind_size == 4 * MiB);
    REQUIRE(out.bindings.size() == 1);
    CHECK(out.bindings[0].bound);
    CHECK(out.steps.back().name == "release memory");
}

TEST_CASE("a failed bind undoes what was made and explains bind resources") {
    reset();
    model_le().bind_result = CUDA_ERROR_OUT_OF_MEMORY;
    const Driver driver = Driver::from_table(le_table(), 13030);
    LeBindOutcome out;
    try {
        run_le_bind(driver, unicast(4 * MiB), out);
        FAIL("did not throw");
    } catch (const Error& e) {
        CHECK(e.problem().cause.find("bind resources") != std::string::npos);
    }
    CHECK(model_le().calls == Calls{"GetLimits", "Granularity", "IdReserve", "Create", "Query", "Query", "MemCreate",
                                    "BindMem", "Destroy", "IdRelease", "MemRelease"});
    CHECK_FALSE(out.completed);
    CHECK_FALSE(out.bindings[0].bound);
    CHECK(out.steps.size() == 10);  // the eleven calls above, the two polls one wait step
}

TEST_CASE("a failed undo is reported and the rest is still undone") {
    reset();
    model_le().unbind_result = CUDA_ERROR_INVALID_VALUE;
    const Driver driver = Driver::from_table(le_table(), 13030);
    LeBindOutcome out;
    run_le_bind(driver, unicast(4 * MiB), out);
    CHECK_FALSE(out.completed);
    REQUIRE(out.undo_failures.size() == 1);
    CHECK(out.undo_failures[0].driver->call == "cuLogicalEndpointUnbind");
    CHECK(model_le().calls.back() == "MemRelease");
}

TEST_CASE("a request that breaks a rule is refused before anything is made") {
    reset();
    const Driver driver = Driver::from_table(le_table(), 13030);
    LeBindOutcome out;
    LeBindRequest r = unicast(4 * MiB);
    r.offset = 1 * MiB;
    CHECK_THROWS_AS(run_le_bind(driver, r, out), Error);
    CHECK(model_le().calls == Calls{"GetLimits", "Granularity"});
    REQUIRE(out.violation.has_value());
    CHECK(out.violation->nearest.size() == 2);
}

TEST_CASE("a construction that never completes is refused with a remedy that names the timeout property") {
    reset();
    model_le().polls_needed = -1;
    const Driver driver = Driver::from_table(le_table(), 13030);
    LeBindOutcome out;
    LeBindRequest r = unicast(4 * MiB);
    r.timeout_seconds = 0;
    try {
        run_le_bind(driver, r, out);
        FAIL("did not throw");
    } catch (const Error& e) {
        CHECK(e.problem().message.find("endpoint 7 was not constructed within 0 s") == 0);
        CHECK(e.problem().remedy.find("wait longer (a longer construction timeout); ") == 0);
    }
    CHECK(model_le().calls ==
          Calls{"GetLimits", "Granularity", "IdReserve", "Create", "Query", "Destroy", "IdRelease"});
    // With le-bind running, the one text made names its flag.
    reset();
    model_le().polls_needed = -1;
    const RunningCommand flags(Command::le_bind);
    try {
        run_le_bind(driver, r, out);
        FAIL("did not throw");
    } catch (const Error& e) {
        CHECK(e.problem().remedy.find("wait longer (a longer --timeout); ") == 0);
    }
}

TEST_CASE("a request with no device or an unbindable location is refused naming the property") {
    reset();
    const Driver driver = Driver::from_table(le_table(), 13030);
    LeBindOutcome out;
    LeBindRequest none = unicast(4 * MiB);
    none.devices.clear();
    CHECK_THROWS_WITH_AS(run_le_bind(driver, none, out), doctest::Contains("no device to bind on"), Error);
    LeBindRequest host = unicast(4 * MiB);
    host.location.type = CU_MEM_LOCATION_TYPE_HOST;
    try {
        run_le_bind(driver, host, out);
        FAIL("did not throw");
    } catch (const Error& e) {
        CHECK(e.exit_code() == ExitCode::usage);
        CHECK(e.problem().remedy == "use location device, host-numa (the node closest to each device) or host-numa:N");
    }
    CHECK(model_le().calls.empty());
}

TEST_CASE("binding rules are checked before the driver: construction, owner, team") {
    reset();
    const DriverApi api = le_table();
    StepLog log(api, le_diagnoser());
    CUlogicalEndpointProp prop{};
    prop.type = static_cast<CUlogicalEndpointType>(le::kTypeUnicast);
    prop.unicast.device = 0;
    prop.size = 4 * MiB;
    LogicalEndpoint uni(log, 7, prop);
    CHECK_THROWS_WITH_AS(uni.check_bind_device(0), doctest::Contains("not known to be constructed"), Error);
    uni.wait_constructed(std::chrono::seconds(1), "test");
    CHECK_NOTHROW(uni.check_bind_device(0));
    CHECK_THROWS_WITH_AS(uni.check_bind_device(1), doctest::Contains("not the owner"), Error);
    CHECK_THROWS_WITH_AS(uni.add_device(1), doctest::Contains("unicast"), Error);

    prop.type = static_cast<CUlogicalEndpointType>(le::kTypeMulticast);
    prop.multicast.numDevices = 2;
    model_le().polls = 0;
    LogicalEndpoint team(log, 8, prop);
    team.add_device(0);
    team.add_device(2);
    team.wait_constructed(std::chrono::seconds(1), "test");
    CHECK_NOTHROW(team.check_bind_device(2));
    CHECK_THROWS_WITH_AS(team.check_bind_device(1), doctest::Contains("was not added"), Error);
}

TEST_CASE("driver support: older than 13.3 names the version; device support follows the attributes") {
    reset();
    const Driver old = Driver::from_table(testing_driver::table(), 13000);
    const LeDriverSupport none = le_driver_support(old);
    CHECK_FALSE(none.available);
    CHECK(none.message == "this driver (13.0) has no logical endpoints; they need 13.3");
    CHECK(le_device_support(old, none, 0).state == LeSupport::unknown);
    CHECK(le_device_support(old, none, 0).reason == none.message);
    CHECK_THROWS_AS(require_logical_endpoints(none), Error);

    DriverApi partial = le_table();
    partial.cuLogicalEndpointBindAddr = nullptr;
    const LeDriverSupport lacking = le_driver_support(Driver::from_table(partial, 13030));
    CHECK(lacking.message == "this driver (13.3) has no logical endpoints: it lacks cuLogicalEndpointBindAddr");

    const Driver driver = Driver::from_table(le_table(), 13030);
    const LeDriverSupport yes = le_driver_support(driver);
    CHECK(yes.available);
    CHECK(le_device_support(driver, yes, 0).state == LeSupport::supported);
    testing_driver::model().attrs[le::kAttrUnicastSupported] = 0;
    testing_driver::model().attrs[le::kAttrMulticastSupported] = 0;
    CHECK(le_device_support(driver, yes, 0).state == LeSupport::not_supported);
    testing_driver::model().attrs.erase(le::kAttrUnicastSupported);
    const LeDeviceSupport unknown = le_device_support(driver, yes, 0);
    CHECK(unknown.state == LeSupport::unknown);
    CHECK(unknown.reason.find("driver 13.3 does not answer") != std::string::npos);
}
