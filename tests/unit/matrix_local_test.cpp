// fabric-matrix --local's pieces: posix-fd descriptors brokered between ranks over their sockets, the
// command line of a rank's process, and a whole --local run of the built binary on the fake driver.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <thread>

#include "base/setting.hpp"
#include "fake_driver.hpp"
#include "matrix/fd_exchange.hpp"
#include "matrix/local_run.hpp"
#include "util/unix_socket.hpp"

using namespace cumemctl;
using namespace cumemctl::matrix;
using namespace std::chrono_literals;

TEST_CASE("the coordinator hands each rank the other ranks' descriptors; a rank without one is passed on as such") {
    auto [c0, r0] = socket_pair();
    auto [c1, r1] = socket_pair();
    auto [c2, r2] = socket_pair();
    const std::vector<int> coordinator_ends{c0.get(), c1.get(), c2.get()};
    std::thread broker([&] { broker_descriptors(coordinator_ends, 5000ms); });
    const DescriptorExchange e0(r0.get()), e1(r1.get()), e2(r2.get());
    UniqueFd f0(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    UniqueFd f1(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
    e0.offer(0, f0.get(), std::nullopt);
    e1.offer(1, f1.get(), std::nullopt);
    e2.offer(2, -1, Problem{.message = "no memory"});
    CHECK(e2.offered());
    const auto got0 = e0.collect(3, 5000ms);
    const auto got2 = e2.collect(3, 5000ms);
    const auto got1 = e1.collect(3, 5000ms);
    broker.join();
    REQUIRE(got0.size() == 1);  // rank 2 had none
    struct stat a {
    }, b{};
    fstat(got0.at(1).get(), &a);
    fstat(f1.get(), &b);
    CHECK(a.st_ino == b.st_ino);
    CHECK(got2.size() == 2);
    CHECK(got1.size() == 1);
    CHECK(got1.contains(0));
}

TEST_CASE("a rank whose coordinator sends nothing fails after its timeout") {
    auto [c0, r0] = socket_pair();
    const DescriptorExchange e0(r0.get());
    CHECK_THROWS_AS(e0.collect(2, 100ms), Error);
}

TEST_CASE("a --local rank's command line names its folder, rank, device and handle type") {
    LocalRequest r;
    r.devices = {0, 1};
    r.size = 4 << 20;
    r.handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    r.timeout = 2500ms;
    r.keep = true;
    r.libcuda = "/lib/x.so";
    const auto args = local_rank_arguments(r, "/tmp/f", 1, 0);
    const std::vector<std::string> want{std::string(command_name(Command::matrix_rank)),
                                        "--socket-fd",
                                        "3",
                                        "--dir",
                                        "/tmp/f",
                                        "--run",
                                        "local",
                                        "--rank",
                                        "1",
                                        "--ranks",
                                        "2",
                                        "--device",
                                        "0",
                                        "--size",
                                        "4194304",
                                        "--handle-type",
                                        "posix-fd",
                                        "--timeout-ms",
                                        "2500",
                                        "--imex-channel-dir",
                                        "/dev/nvidia-caps-imex-channels",
                                        "--libcuda",
                                        "/lib/x.so",
                                        "--keep"};
    CHECK(args == want);
}

TEST_CASE("a --local run of the built binary: every pair passes with posix-fd, and the folder goes") {
    LocalRequest r;
    r.devices = {0, 1, 2};
    r.handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    r.timeout = 20000ms;
    r.executable = CUMEMCTL_BINARY;
    r.libcuda = FAKECUDA_LIBRARY;
    const LocalResult result = run_local(testing_driver::fake_driver().api(), r);
    REQUIRE(result.ranks.size() == 3);
    for (const auto& rank : result.ranks) {
        CHECK(rank.exit_status == 0);
        CHECK_FALSE(rank.problem.has_value());
    }
    const Matrix m = build_matrix(result.input);
    CHECK(m.passed());
    CHECK(m.info[2].device == 2);
    struct stat st {};
    CHECK(stat(result.folder.c_str(), &st) != 0);
}
