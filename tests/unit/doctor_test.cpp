#include <doctest/doctest.h>
#include <signal.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "doctor/registry.hpp"
#include "doctor/runner.hpp"
#include "driver_table.hpp"
#include "ipc/child.hpp"

using namespace cumemctl;
using namespace cumemctl::doctor;

namespace {

// A model of a device that supports VMM and pools and nothing of CUDA 13.3.
void h200_like(int devices) {
    auto& m = testing_driver::model();
    m = testing_driver::Model{};
    m.device_count = devices;
    m.attrs = {{CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1},
               {CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 1},
               {CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, 1},
               {CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0},
               {CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 0}};
}

// The checks that need no allocation (the driver table below has no VMM or pool entry points).
DoctorOptions basic_checks() {
    DoctorOptions o;
    o.checks = {"driver", "devices", "context", "capabilities", "logical-endpoints", "imex-channels"};
    return o;
}

const CheckResult& find(const DoctorRun& run, std::string_view check, std::optional<int> device = std::nullopt) {
    for (const auto& r : run.results) {
        if (r.check == check && r.device == device) return r;
    }
    FAIL("no result for ", std::string(check));
    throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("parse_check_list keeps catalogue order and refuses unknown names with the list") {
    CHECK(parse_check_list("imex-channels,driver") == std::vector<std::string>{"driver", "imex-channels"});
    CHECK(parse_check_list("all").size() == check_catalogue().size());
    CHECK(parse_check_list("context,context") == std::vector<std::string>{"context"});
    try {
        parse_check_list("driver,nope");
        FAIL("no throw");
    } catch (const Error& e) {
        CHECK(e.exit_code() == ExitCode::usage);
        CHECK(std::string(e.what()) == "unknown check 'nope'");
        CHECK(e.problem().remedy.find("driver, devices, context") != std::string::npos);
    }
    CHECK_THROWS_AS(parse_check_list("driver,"), Error);
}

TEST_CASE("every check of the catalogue has an id, a summary and a function") {
    for (const auto& c : check_catalogue()) {
        CHECK_FALSE(c.id.empty());
        CHECK_FALSE(c.summary.empty());
        CHECK((c.run != nullptr));
    }
}

TEST_CASE("doctor on one device: results in order, one context retained and released") {
    h200_like(1);
    Driver driver = Driver::from_table(testing_driver::table(), 13000);
    const DoctorRun run = run_doctor(driver, basic_checks());
    REQUIRE(run.results.size() == 6);
    CHECK(run.results[0].check == "driver");
    CHECK(run.results[1].check == "devices");
    CHECK(find(run, "devices").outcome.reason == "1 device: Test GPU");
    CHECK(find(run, "context", 0).outcome.status == CheckStatus::pass);
    const auto* context = find(run, "context", 0).outcome.evidence_as<ContextEvidence>();
    REQUIRE(context != nullptr);
    CHECK(context->free_bytes == testing_driver::model().free);
    CHECK(find(run, "capabilities", 0).outcome.reason == "VMM yes, pools yes (posix-fd), fabric no, multicast no");
    CHECK(find(run, "logical-endpoints", 0).outcome.status == CheckStatus::skip);
    CHECK(find(run, "imex-channels").outcome.status == CheckStatus::skip);
    CHECK(testing_driver::model().retained == 0);
    const auto counts = count_statuses(run.results);
    CHECK(counts[0] == 4);
    CHECK(counts[3] == 2);
}

TEST_CASE("doctor on three devices runs each device's checks and reports them by device") {
    h200_like(3);
    Driver driver = Driver::from_table(testing_driver::table(), 13000);
    DoctorOptions options;
    options.checks = {"context", "capabilities"};
    const DoctorRun run = run_doctor(driver, options);
    REQUIRE(run.results.size() == 6);
    for (int d = 0; d < 3; ++d) {
        CHECK(run.results[static_cast<std::size_t>(2 * d)].device == d);
        CHECK(run.results[static_cast<std::size_t>(2 * d)].check == "context");
        CHECK(run.results[static_cast<std::size_t>(2 * d + 1)].check == "capabilities");
    }
    CHECK(run.devices == std::vector<int>{0, 1, 2});
    CHECK(testing_driver::model().retained == 0);
}

TEST_CASE("a context that cannot be made fails its check; checks that need it are skipped") {
    h200_like(1);
    testing_driver::model().retain_result = CUDA_ERROR_INVALID_VALUE;
    Driver driver = Driver::from_table(testing_driver::table(), 13000);
    DoctorOptions options = basic_checks();
    options.checks.insert(options.checks.begin() + 4, "vmm");
    const DoctorRun run = run_doctor(driver, options);
    const auto& ctx = find(run, "context", 0);
    CHECK(ctx.outcome.status == CheckStatus::fail);
    REQUIRE(ctx.outcome.driver.has_value());
    CHECK(ctx.outcome.driver->call == "cuDevicePrimaryCtxRetain");
    CHECK_FALSE(ctx.outcome.remedy.empty());
    CHECK(find(run, "capabilities", 0).outcome.status == CheckStatus::pass);
    CHECK(find(run, "vmm", 0).outcome.status == CheckStatus::skip);
    CHECK(find(run, "vmm", 0).outcome.reason.find("see the context check") != std::string::npos);
    DeviceState state(driver.api(), 0);
    CHECK_THROWS_AS(state.context(), Error);
    CHECK_THROWS_AS(state.context(), CheckSkipped);
}

TEST_CASE("no device is a failed devices check, and nothing per device runs") {
    h200_like(0);
    Driver driver = Driver::from_table(testing_driver::table(), 13000);
    const DoctorRun run = run_doctor(driver, DoctorOptions{});
    CHECK(find(run, "devices").outcome.status == CheckStatus::fail);
    // driver, devices and the node checks (imex-channels, imex-domain, peer-access, inventory, xid); nothing
    // per device.
    CHECK(run.results.size() == 7);
    for (const auto& r : run.results) CHECK_FALSE(r.device.has_value());
    CHECK(run.device_count == 0);
}

TEST_CASE("VMM or pools missing is a warning with a remedy") {
    h200_like(1);
    testing_driver::model().attrs.erase(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED);
    Driver driver = Driver::from_table(testing_driver::table(), 13000);
    DoctorOptions options;
    options.checks = {"capabilities"};
    const DoctorRun run = run_doctor(driver, options);
    const auto& r = run.results.at(0);
    CHECK(r.outcome.status == CheckStatus::warn);
    CHECK(r.outcome.reason == "VMM yes, pools unknown, fabric no, multicast no");
    CHECK(r.outcome.remedy.find("memory pools") != std::string::npos);
}

TEST_CASE("logical endpoints a device supports but the driver cannot call are a warning") {
    h200_like(1);
    testing_driver::model().attrs[le::kAttrUnicastSupported] = 1;
    testing_driver::model().attrs[le::kAttrMulticastSupported] = 0;
    Driver driver = Driver::from_table(testing_driver::table(), 13030);
    DoctorOptions options;
    options.checks = {"logical-endpoints"};
    const DoctorRun run = run_doctor(driver, options);
    const auto& r = run.results.at(0);
    CHECK(r.outcome.status == CheckStatus::warn);
    CHECK(r.outcome.reason.rfind("supported: unicast; but the driver lacks 5", 0) == 0);
}

TEST_CASE("a malformed --device is a usage error before anything runs") {
    h200_like(1);
    Driver driver = Driver::from_table(testing_driver::table(), 13000);
    DoctorOptions options;
    CHECK_THROWS_AS(options.devices = gpu::parse_device_list("zero"), Error);
    options.devices = gpu::parse_device_list("4");
    try {
        run_doctor(driver, options);
        FAIL("no throw");
    } catch (const Error& e) {
        CHECK(e.exit_code() == ExitCode::unavailable);
    }
}

TEST_CASE("an allocating check on a driver without the entry points it needs fails and says which") {
    h200_like(1);
    Driver driver = Driver::from_table(testing_driver::table(), 13000);
    DoctorOptions options;
    options.checks = {"pool-trim", "posix-fd-ipc", "fabric-alloc"};
    const DoctorRun run = run_doctor(driver, options);
    const auto& trim = find(run, "pool-trim", 0);
    CHECK(trim.outcome.status == CheckStatus::fail);
    CHECK(trim.outcome.reason.find("this driver has no") == 0);
    CHECK(find(run, "posix-fd-ipc", 0).outcome.status == CheckStatus::skip);  // no POSIX-fd attribute
    CHECK(find(run, "fabric-alloc", 0).outcome.status == CheckStatus::skip);  // no fabric handles
    CHECK(testing_driver::model().retained == 0);
}

TEST_CASE("doctor's run names each examined device's UUID, for the metrics") {
    h200_like(2);
    Driver driver = Driver::from_table(testing_driver::table(), 13000);
    DoctorOptions options;
    options.checks = {"capabilities"};
    const DoctorRun run = run_doctor(driver, options);
    REQUIRE(run.identities.size() == 2);
    // The table's devices share one UUID: 00112233-4455-...
    CHECK(identity_of(run, 0).uuid == "GPU-00112233-4455-6677-8899-aabbccddeeff");
    CHECK(identity_of(run, 1).ordinal == 1);
    CHECK(identity_of(run, 1).uuid == run.identities[1].uuid);
    CHECK(identity_of(run, 5).uuid.empty());
    CHECK_FALSE(identity_of(run, 0).nvml_index.has_value());  // no NVML in this run
}

TEST_CASE("a device's importer: the checks take it and give it back; finish ends it by closing its socket") {
    h200_like(1);
    Driver driver = Driver::from_table(testing_driver::table(), 13000);
    driver.init();
    ipc::SpawnRequest waiting;
    waiting.executable = "/bin/sh";
    waiting.args = {"-c", "cat <&3 >/dev/null"};  // ends when its socket closes, as the importer does
    pid_t pid = -1;
    {
        DeviceState device(driver.api(), 0);
        CHECK_FALSE(device.importer().has_value());
        device.importer() = ipc::spawn_connected(waiting);
        pid = device.importer()->process.pid();
        std::optional<ipc::Child> taken = std::exchange(device.importer(), std::nullopt);
        REQUIRE(taken.has_value());
        CHECK_FALSE(device.importer().has_value());
        device.importer() = std::move(taken);
        const auto start = std::chrono::steady_clock::now();
        device.finish();
        // Ended by its closed socket and reaped, not stopped after the 5 s grace time (under qemu a
        // shell may take seconds to start and read its end of the socket).
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(4500));
        CHECK_FALSE(device.importer().has_value());
        CHECK(::kill(pid, 0) == -1);
    }
}

TEST_CASE("a remedy that asks to change the request is doctor's own, known by its mark, not its words") {
    Problem p{.exit_code = ExitCode::failed,
              .message = "cuMemCreate failed",
              .remedy = "leave out options one at a time ('cumemctl granularity' lists what this driver accepts)",
              .device = 2,
              .remedy_changes_request = true};
    CHECK(outcome_from_error(p).remedy.rfind("the driver refused memory that this GPU's attributes say it supports: "
                                             "compare 'cumemctl granularity --device 2'",
                                             0) == 0);
    // The same words without the mark are a remedy like any other, kept as they are.
    p.remedy_changes_request = false;
    CHECK(outcome_from_error(p).remedy == p.remedy);
}
