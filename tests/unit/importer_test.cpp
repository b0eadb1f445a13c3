// The importer (gpu/importer): one second process serves several IPC checks of a device, one after
// the other, with one start-up; it ends when the first process closes its end, and answers what it
// cannot serve with a problem.
#include <doctest/doctest.h>
#include <sys/socket.h>

#include "fake_driver.hpp"
#include "gpu/importer/importer.hpp"
#include "gpu/pool/pool_create.hpp"
#include "gpu/pool/pool_ipc.hpp"
#include "gpu/vmm/vmm_create.hpp"
#include "ipc/envelope.hpp"
#include "util/unix_socket.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;
using namespace std::chrono_literals;

TEST_CASE("one importer serves an import check and then a pool import, and ends when its socket closes") {
    testing_driver::use_fake_device(0);
    const DriverApi& api = testing_driver::fake_driver().api();
    std::optional<ipc::Child> importer =
        start_importer(ImporterStart{CUMEMCTL_BINARY, FAKECUDA_LIBRARY, child_device_view(api, 0)});
    const pid_t pid = importer->process.pid();

    // The import check gives it back, still serving.
    CreateRequest create;
    create.device = 0;
    create.size = 2 << 20;
    create.memory.handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    create.map = create.export_handle = create.import_check = true;
    create.executable = CUMEMCTL_BINARY;
    create.libcuda = FAKECUDA_LIBRARY;
    create.importer = &importer;
    create.keep_importer = true;
    CreateResult created;
    run_create(api, create, created);
    REQUIRE(created.import_check.has_value());
    CHECK(created.import_check->ok());
    CHECK(created.import_check->pid == pid);
    CHECK(created.import_check->exit_status == -1);  // not ended: it serves on
    REQUIRE(importer.has_value());
    CHECK(importer->process.pid() == pid);

    // The pool check takes the same process (its start-up steps repeat: they were done once) and ends it.
    PoolRequest pool;
    pool.handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    IpcRequest ipc;
    ipc.seed = 5;
    ipc.libcuda = FAKECUDA_LIBRARY;
    ipc.executable = CUMEMCTL_BINARY;
    ipc.timeout = 20000ms;
    ipc.importer = &importer;
    const CreatePoolResult r = create_pool_and_check(api, 0, pool, 2 << 20, ipc);
    CHECK(r.outcome.passed());
    CHECK_FALSE(importer.has_value());
    std::string started, ended;
    for (const auto& s : r.outcome.steps()) {
        if (s.name == "start importer") started = s.detail;
        if (s.name == "importer exit") ended = s.detail;
    }
    CHECK(started == fmt::format("a second cumemctl process, pid {}, started ahead", pid));
    CHECK(ended == "exited with status 0");
    api.cuCtxSetCurrent(nullptr);
}

TEST_CASE("an importer asked for a service it does not have answers with a problem and serves on") {
    auto [parent, child] = socket_pair();
    ipc::Request unknown;
    unknown.service = "teleport";
    ipc::send_request(parent.get(), unknown);
    ipc::send_request(parent.get(), ipc::Request{});
    shutdown(parent.get(), SHUT_WR);
    const std::optional<Problem> exit = serve_importer(testing_driver::fake_driver(), child.get(), 0, {}, 1000ms);
    const ipc::Envelope first = ipc::receive_envelope(parent.get(), 1000ms);
    const ipc::Envelope second = ipc::receive_envelope(parent.get(), 1000ms);
    REQUIRE(first.problem.has_value());
    CHECK(first.problem->message == "internal error: the importer has no service 'teleport'");
    REQUIRE(second.problem.has_value());
    CHECK(second.problem->message == "internal error: the importer has no service ''");
    // Its start-up steps come with every answer.
    REQUIRE(first.steps.size() == 2);
    CHECK(first.steps[0].name == "init");
    CHECK(first.steps[1].name == "context");
    CHECK(first.steps[1].ok);
    // The first problem is its exit code's.
    REQUIRE(exit.has_value());
    CHECK(exit->message == first.problem->message);
    testing_driver::fake_driver().api().cuCtxSetCurrent(nullptr);
}

TEST_CASE("an importer whose first process closes its end before any request ends without a problem") {
    auto [parent, child] = socket_pair();
    parent.reset();
    CHECK_FALSE(serve_importer(testing_driver::fake_driver(), child.get(), 0, {}, 1000ms).has_value());
    testing_driver::fake_driver().api().cuCtxSetCurrent(nullptr);
}

TEST_CASE("release_importer gives an importer back to a slot that keeps it, else ends it") {
    const DriverApi& api = testing_driver::fake_driver().api();
    const ImporterStart start{CUMEMCTL_BINARY, FAKECUDA_LIBRARY, child_device_view(api, 0)};
    std::optional<ipc::Child> slot;
    ipc::Child first = take_importer({&slot, true}, start);
    const pid_t pid = first.process.pid();
    CHECK_FALSE(release_importer(std::move(first), {&slot, true}, 10000ms).has_value());
    REQUIRE(slot.has_value());
    ipc::Child again = take_importer({&slot, false}, start);
    CHECK(again.process.pid() == pid);
    CHECK_FALSE(slot.has_value());
    // Closing its socket ends it: no request was left for it, and none failed.
    const std::optional<int> status = release_importer(std::move(again), {&slot, false}, 10000ms);
    REQUIRE(status.has_value());
    CHECK(*status == 0);
}
