// create --pool --ipc-check: the exporter and a second cumemctl (the built binary) share a pool
// through the fake driver; the importer's side answers a malformed request with a problem.
#include <doctest/doctest.h>

#include "fake_driver.hpp"
#include "gpu/pool/pool_create.hpp"
#include "gpu/pool/pool_ipc.hpp"
#include "ipc/envelope.hpp"
#include "util/unix_socket.hpp"

#include <sys/socket.h>

using namespace cumemctl;
using namespace cumemctl::gpu;
using namespace std::chrono_literals;

// The service under test.
const ImporterService pool_import_services[] = {kPoolImportService};

TEST_CASE("the pool IPC check runs the exporter's and the importer's steps, in order, and passes") {
    testing_driver::use_fake_device(0);
    const DriverApi& api = testing_driver::fake_driver().api();
    PoolRequest request;
    request.handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    IpcRequest ipc;
    ipc.seed = 7;
    ipc.libcuda = FAKECUDA_LIBRARY;
    ipc.executable = CUMEMCTL_BINARY;
    ipc.timeout = 20000ms;
    const CreatePoolResult r = create_pool_and_check(api, 0, request, 2 << 20, ipc);
    CHECK(r.outcome.passed());
    CHECK(r.ipc_checked);
    std::string exporter, importer;
    for (const auto& s : r.outcome.steps()) {
        CHECK(s.ok);
        (s.process == "importer" ? importer : exporter) += s.name + ", ";
    }
    CHECK(importer ==
          "init, context, receive, import pool, pool access, import pointer, read pattern, pool statistics, "
          "free import, "
          "close imported pool, ");
    CHECK(exporter ==
          "create pool, allocate, write pattern, export pool, export pointer, start importer, send pool and pointer, "
          "wait for the importer's report, read the importer's report, importer exit, free, destroy pool, ");
    CHECK(r.outcome.steps().back().process == "exporter");
    api.cuCtxSetCurrent(nullptr);
}

TEST_CASE("an importer whose request is malformed answers with the problem and no import") {
    auto [exporter, importer] = socket_pair();
    ipc::send_request(exporter.get(), ipc::Request{kPoolImportService.name, {{"device", 0}}, {}});
    shutdown(exporter.get(), SHUT_WR);
    const std::optional<Problem> exit =
        serve_importer(testing_driver::fake_driver(), importer.get(), 0, pool_import_services, 1000ms);
    const ipc::Envelope answer = ipc::receive_envelope(exporter.get(), 1000ms);
    REQUIRE(answer.problem.has_value());
    CHECK(answer.problem->message.find("the exporter's message") != std::string::npos);
    REQUIRE(exit.has_value());
    CHECK(exit->message == answer.problem->message);
    // Only the start-up and the wait for the message: nothing was imported.
    REQUIRE(answer.steps.size() == 3);
    CHECK(answer.steps[1].name == "context");
    CHECK(answer.steps[2].name == "receive");
    testing_driver::fake_driver().api().cuCtxSetCurrent(nullptr);
}

TEST_CASE("an importer whose context fails still takes the exporter's message, then answers with the failure") {
    auto [exporter, importer] = socket_pair();
    ipc::send_request(exporter.get(), ipc::Request{kPoolImportService.name, {{"handle_type", "posix-fd"}}, {}});
    shutdown(exporter.get(), SHUT_WR);
    const std::optional<Problem> exit =
        serve_importer(testing_driver::fake_driver(), importer.get(), 99, pool_import_services, 1000ms);
    REQUIRE(exit.has_value());
    const ipc::Envelope answer = ipc::receive_envelope(exporter.get(), 1000ms);
    REQUIRE(answer.problem.has_value());
    REQUIRE(answer.steps.size() == 2);
    CHECK(answer.steps[1].name == "context");
    CHECK_FALSE(answer.steps[1].ok);
    // The message was taken: nothing is left queued for the importer.
    CHECK_THROWS_WITH_AS(ipc::receive_request(importer.get(), 10ms), doctest::Contains("closed the connection"), Error);
}

TEST_CASE("an importer started ahead of the pool is the one the check uses") {
    testing_driver::use_fake_device(0);
    const DriverApi& api = testing_driver::fake_driver().api();
    PoolRequest request;
    request.handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    IpcRequest ipc;
    ipc.seed = 11;
    ipc.libcuda = FAKECUDA_LIBRARY;
    ipc.executable = CUMEMCTL_BINARY;
    ipc.timeout = 20000ms;
    std::optional<ipc::Child> early = start_pool_importer(api, ipc);
    const pid_t pid = early->process.pid();
    ipc.importer = &early;
    const CreatePoolResult r = create_pool_and_check(api, 0, request, 2 << 20, ipc);
    CHECK(r.outcome.passed());
    CHECK_FALSE(early.has_value());
    bool seen = false;
    for (const auto& s : r.outcome.steps()) {
        if (s.name != "start importer") continue;
        seen = true;
        CHECK(s.detail == fmt::format("a second cumemctl process, pid {}, started ahead", pid));
    }
    CHECK(seen);
    api.cuCtxSetCurrent(nullptr);
}

TEST_CASE("an importer that gets no request gives up at its timeout, with a problem") {
    auto [exporter, importer] = socket_pair();
    const std::optional<Problem> exit =
        serve_importer(testing_driver::fake_driver(), importer.get(), 0, pool_import_services, 10ms);
    REQUIRE(exit.has_value());
    CHECK(exit->message.find("no message within") != std::string::npos);
    testing_driver::fake_driver().api().cuCtxSetCurrent(nullptr);
}
