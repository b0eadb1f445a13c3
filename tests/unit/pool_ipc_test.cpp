// create --pool --ipc-check: the exporter and a second cumemctl (the built binary) share a pool
// through the fake driver; the importer's side answers a malformed request with a problem.
#include <doctest/doctest.h>

#include "fake_driver.hpp"
#include "gpu/pool/pool_create.hpp"
#include "gpu/pool/pool_ipc.hpp"
#include "ipc/envelope.hpp"
#include "util/unix_socket.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "gpu/pool/pool_access.hpp"
#include "gpu/pool/pool_workload.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;
using namespace std::chrono_literals;

// The service under test.
const ImporterService pool_import_services[] = {kPoolImportService};

// The pool IPC check against the fake driver and the built binary, with `seed`.
IpcRequest fake_ipc_request(std::uint64_t seed) {
    IpcRequest ipc;
    ipc.seed = seed;
    ipc.libcuda = FAKECUDA_LIBRARY;
    ipc.executable = CUMEMCTL_BINARY;
    ipc.timeout = 20000ms;
    return ipc;
}

// A pool request that shares through POSIX file descriptors.
PoolRequest posix_fd_pool() {
    PoolRequest request;
    request.handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return request;
}

TEST_CASE("the pool IPC check runs the exporter's and the importer's steps, in order, and passes") {
    testing_driver::use_fake_device(0);
    const DriverApi& api = testing_driver::fake_driver().api();
    const CreatePoolResult r = create_pool_and_check(api, 0, posix_fd_pool(), 2 << 20, fake_ipc_request(7));
    CHECK(r.outcome.passed());
    CHECK(r.ipc_checked);
    std::string exporter, importer;
    for (const auto& s : r.outcome.steps()) {
        CHECK(s.ok);
        (s.process == "importer" ? importer : exporter) += s.name + ", ";
    }
    CHECK(importer ==
          "init, context, receive, import pool, pool access, import pointer, read pattern, "
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

namespace {

// What the fake driver writes to stderr while `work` runs.
template <class Work>
std::string stderr_of(Work&& work) {
    char name[] = "/tmp/cumemctl-stderr-XXXXXX";
    const int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    std::fflush(stderr);
    const int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    work();
    std::fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(fd);
    std::stringstream text;
    text << std::ifstream(name).rdbuf();
    unlink(name);
    return text.str();
}

// The mark an importer of `data` with pid `importer` leaves (the fake's export data: magic, offset, size,
// pool, exporter pid; tests/fakecuda/fake_pools.hpp names the mark).
std::string import_mark(const std::string& dir, const CUmemPoolPtrExportData& data, int importer) {
    struct {
        char magic[8];
        std::uint64_t offset, size, pool;
        std::int32_t exporter_pid;
    } e{};
    std::memcpy(&e, data.reserved, sizeof e);
    return dir + "/" + std::to_string(e.exporter_pid) + "-" + std::to_string(e.pool) + "-" + std::to_string(e.offset) +
           "-" + std::to_string(importer);
}

// A folder of the fake's import marks (FAKECUDA_IMPORT_MARKS) while the object lives.
struct MarksFolder {
    std::string path;
    MarksFolder() {
        char name[] = "/tmp/cumemctl-marks-XXXXXX";
        REQUIRE(mkdtemp(name) != nullptr);
        path = name;
        setenv("FAKECUDA_IMPORT_MARKS", name, 1);
    }
    ~MarksFolder() {
        unsetenv("FAKECUDA_IMPORT_MARKS");
        rmdir(path.c_str());
    }
};

// A block of `pool`, its export data and the mark an importer with pid `importer` would leave for it.
struct ExportedBlock {
    PoolAllocation block;
    std::string mark;
    ExportedBlock(const DriverApi& api, const OwnedPool& pool, const Stream& stream, const MarksFolder& marks,
                  int importer)
        : block(api, pool.handle(), 2 << 20, stream) {
        // The pool's handle first: a driver exports no pointer of a pool that it has not shared.
        int fd = -1;
        REQUIRE(api.cuMemPoolExportToShareableHandle(&fd, pool.handle(), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) ==
                CUDA_SUCCESS);
        ::close(fd);
        CUmemPoolPtrExportData data{};
        REQUIRE(api.cuMemPoolExportPointer(&data, block.get()) == CUDA_SUCCESS);
        mark = import_mark(marks.path, data, importer);
        std::ofstream(mark).put('\n');
    }
};

}  // namespace

TEST_CASE("the fake driver flags an exporter that frees a block a living importer still holds (the IPC protocol)") {
    testing_driver::use_fake_device(0);
    const DriverApi& api = testing_driver::fake_driver().api();
    const MarksFolder marks;
    OwnedPool pool(api, 0, posix_fd_pool());
    const Stream stream(api);
    {
        // The parent of this process stands for an importer that still holds the import.
        ExportedBlock held(api, pool, stream, marks, getppid());
        const std::string said = stderr_of([&] { held.block.free(); });
        CHECK(said.find("fakecuda: protocol: pool pointer at offset") != std::string::npos);
        CHECK(said.find(fmt::format("while pid {} still has it imported", getppid())) != std::string::npos);
        unlink(held.mark.c_str());
    }
    {
        // An importer that has ended took its import with it: its mark is stale, removed, and no breach.
        const pid_t ended = fork();
        if (ended == 0) _exit(0);
        waitpid(ended, nullptr, 0);
        ExportedBlock stale(api, pool, stream, marks, ended);
        CHECK(stderr_of([&] { stale.block.free(); }).find("fakecuda: protocol") == std::string::npos);
        CHECK(access(stale.mark.c_str(), F_OK) != 0);
    }
    api.cuCtxSetCurrent(nullptr);
}

TEST_CASE("the pool IPC check leaves no import behind: the importer freed it before the exporter freed") {
    testing_driver::use_fake_device(0);
    const DriverApi& api = testing_driver::fake_driver().api();
    const MarksFolder marks;
    const std::string out = stderr_of(
        [&] { CHECK(create_pool_and_check(api, 0, posix_fd_pool(), 2 << 20, fake_ipc_request(9)).outcome.passed()); });
    CHECK(out.find("fakecuda: protocol") == std::string::npos);
    CHECK(rmdir(marks.path.c_str()) == 0);  // empty: every mark was removed by the importer's free
    api.cuCtxSetCurrent(nullptr);
}
