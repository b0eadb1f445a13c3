// create --import-check's second process: the whole round trip through the fake driver with the
// built binary, the second process's side on its own, and a second process that never answers.
#include <doctest/doctest.h>

#include "base/setting.hpp"
#include "fake_driver.hpp"
#include "gpu/vmm/import_check.hpp"
#include "gpu/vmm/vmm_create.hpp"
#include "ipc/envelope.hpp"
#include "util/unix_socket.hpp"

#include <sys/socket.h>

using namespace cumemctl;
using namespace cumemctl::gpu;
using namespace std::chrono_literals;

namespace {

ImportCheckRequest import_request_for_test() {
    ImportCheckRequest r;
    r.executable = CUMEMCTL_BINARY;
    r.libcuda = FAKECUDA_LIBRARY;
    r.device = 1;
    r.size = 2 << 20;
    r.alignment = 2 << 20;
    r.timeout = 20000ms;
    return r;
}

}  // namespace

// The service under test.
const ImporterService import_check_services[] = {kImportCheckService};

TEST_CASE("create's import check: a second cumemctl imports, maps and checks the pattern, and says so") {
    CreateRequest r;
    r.device = 1;
    r.size = 2 << 20;
    r.memory.handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    r.map = r.export_handle = r.import_check = true;
    r.executable = CUMEMCTL_BINARY;
    r.libcuda = FAKECUDA_LIBRARY;
    CreateResult result;
    run_create(testing_driver::fake_driver().api(), r, result);
    REQUIRE(result.import_check.has_value());
    const ImportCheckResult& ic = *result.import_check;
    CHECK(ic.ok());
    CHECK(ic.exit_status == 0);
    CHECK(ic.pid > 0);
    std::string names;
    for (const auto& s : ic.steps) {
        names += s.name + " ";
        CHECK(s.process == "importer");
        CHECK(s.ok);
    }
    CHECK(names == "init context receive import reserve map access check unmap free-address release ");
    testing_driver::fake_driver().api().cuCtxSetCurrent(nullptr);
}

TEST_CASE("an import check started ahead of the allocation is the one create uses, told the size with the handle") {
    CreateRequest r;
    r.device = 1;
    r.size = 4 << 20;
    r.memory.handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    r.map = r.export_handle = r.import_check = true;
    r.executable = CUMEMCTL_BINARY;
    r.libcuda = FAKECUDA_LIBRARY;
    const DriverApi& api = testing_driver::fake_driver().api();
    std::optional<ipc::Child> early = start_create_importer(api, r);
    const int pid = early->process.pid();
    r.importer = &early;
    CreateResult result;
    run_create(api, r, result);
    CHECK_FALSE(early.has_value());
    REQUIRE(result.import_check.has_value());
    CHECK(result.import_check->ok());
    CHECK(result.import_check->pid == pid);
    REQUIRE(result.import_check->check.has_value());
    CHECK(result.import_check->check->bytes == result.size);
    api.cuCtxSetCurrent(nullptr);
}

TEST_CASE("an import check whose driver fails still takes the handle, then answers with the failure") {
    auto [parent, child] = socket_pair();
    ipc::send_request(parent.get(), ipc::Request{kImportCheckService.name, {{"posix_fd", true}}, {}});
    shutdown(parent.get(), SHUT_WR);  // no request after this one
    // No such device: the context fails before the handle is taken.
    const std::optional<Problem> exit =
        serve_importer(testing_driver::fake_driver(), child.get(), 99, import_check_services, 1000ms);
    REQUIRE(exit.has_value());
    CHECK_THROWS_WITH_AS(ipc::receive_request(child.get(), 10ms), doctest::Contains("closed the connection"), Error);
    const ipc::Envelope answer = ipc::receive_envelope(parent.get(), 1000ms);
    REQUIRE(answer.problem.has_value());
    CHECK(answer.problem->message == exit->message);
    REQUIRE(answer.steps.size() == 2);
    CHECK(answer.steps[1].name == "context");
    CHECK_FALSE(answer.steps[1].ok);
}

TEST_CASE("the import check's side reports a handle that does not arrive whole as a failed import") {
    auto [parent, child] = socket_pair();
    ipc::send_request(
        parent.get(),
        ipc::Request{kImportCheckService.name, {{"handle_type", "fabric"}, {"fabric_handle", "abcd"}}, {}});
    shutdown(parent.get(), SHUT_WR);
    const std::optional<Problem> exit =
        serve_importer(testing_driver::fake_driver(), child.get(), 1, import_check_services, 1000ms);
    REQUIRE(exit.has_value());
    CHECK(exit->message.find("hex digits") != std::string::npos);
    const ipc::Envelope answer = ipc::receive_envelope(parent.get(), 1000ms);
    REQUIRE(answer.problem.has_value());
    CHECK(answer.problem->message == exit->message);
    REQUIRE(answer.steps.size() == 4);
    CHECK(answer.steps[2].name == "receive");
    CHECK(answer.steps[3].name == "import");
    CHECK_FALSE(answer.steps[3].ok);
    CHECK(answer.result.is_null());
    testing_driver::fake_driver().api().cuCtxSetCurrent(nullptr);
}

TEST_CASE("a second process that ends without a report is a problem with its exit status") {
    ImportCheckRequest request = import_request_for_test();
    request.executable = "/bin/false";
    ExportedHandle handle;
    handle.type = CU_MEM_HANDLE_TYPE_FABRIC;
    const ImportCheckResult r = run_import_check(request, handle);
    REQUIRE(r.problem.has_value());
    CHECK(r.problem->message.find("gave no report (exit status 1)") != std::string::npos);
    CHECK(r.exit_status == 1);
    CHECK_FALSE(r.ok());
}

TEST_CASE("the importer's arguments name the hidden subcommand, the socket at 3 and the device as it sees it") {
    const auto args = importer_arguments(import_check_start(import_request_for_test()));
    REQUIRE(args.size() == 7);
    CHECK(args[0] == command_name(Command::importer));
    CHECK(args[1] == "--socket-fd");
    CHECK(args[2] == "3");
    CHECK(args[3] == "--device");
    CHECK(args[4] == "1");
    CHECK(args[6] == FAKECUDA_LIBRARY);
}
