// base/interrupt: a recorded SIGINT or SIGTERM becomes Interrupted at the safe points (steps, waits for a
// message or a child), passes through the handlers that turn failures into results, and the child of a
// dropped ipc::Process gets SIGTERM first, so that it can unwind.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "base/error.hpp"
#include "base/interrupt.hpp"
#include "ipc/process.hpp"
#include "steps/step_log.hpp"
#include "util/unix_socket.hpp"

using namespace cumemctl;
using namespace std::chrono_literals;

namespace {

// Clears the recorded signal when a test ends, whatever happened.
struct ClearInterrupt {
    ClearInterrupt() { clear_interrupt(); }
    ~ClearInterrupt() { clear_interrupt(); }
};

}  // namespace

TEST_CASE("a recorded signal becomes Interrupted with 130 for SIGINT and 143 for SIGTERM; the first one counts") {
    ClearInterrupt clear;
    CHECK_NOTHROW(check_interrupted());
    record_interrupt(SIGTERM);
    record_interrupt(SIGINT);
    CHECK(interrupt_signal() == SIGTERM);
    try {
        check_interrupted();
        FAIL("no Interrupted");
    } catch (const Interrupted& e) {
        CHECK(e.signal() == SIGTERM);
        CHECK(static_cast<int>(e.exit_code()) == 143);
        CHECK(exit_code_name(e.exit_code()) == "terminated");
    }
    clear_interrupt();
    record_interrupt(SIGINT);
    CHECK(static_cast<int>(Interrupted(interrupt_signal()).exit_code()) == 130);
}

TEST_CASE("the handler itself records the signal: raise(SIGINT) does not end the process") {
    ClearInterrupt clear;
    install_interrupt_handler();
    raise(SIGINT);
    CHECK(interrupt_signal() == SIGINT);
    CHECK_THROWS_AS(check_interrupted(), Interrupted);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}

TEST_CASE("steps are safe points, and attempt does not swallow Interrupted; undo still runs") {
    ClearInterrupt clear;
    StepLog log;
    CHECK(log.attempt("before", [] { return std::string("fine"); }));
    CHECK_THROWS_AS(log.attempt("stops",
                                [] {
                                    record_interrupt(SIGINT);
                                    check_interrupted();
                                    return std::string();
                                }),
                    Interrupted);
    CHECK_THROWS_AS(log.time("next", "", [] {}), Interrupted);
    CHECK(log.steps().size() == 1);
}

TEST_CASE("a wait for a message ends on a stop request, long before its timeout") {
    ClearInterrupt clear;
    auto [a, b] = socket_pair();
    std::thread later([] {
        std::this_thread::sleep_for(200ms);
        record_interrupt(SIGTERM);
    });
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_AS(receive_message(a.get(), 30s), Interrupted);
    later.join();
    CHECK(std::chrono::steady_clock::now() - start < 10s);
}

TEST_CASE("a wait for a child ends on a stop request; dropping the child sends SIGTERM first") {
    ClearInterrupt clear;
    std::optional<int> status;
    {
        ipc::SpawnRequest r;
        r.executable = "/bin/sleep";
        r.args = {"30"};
        ipc::Process child = ipc::Process::spawn(r);
        record_interrupt(SIGINT);
        CHECK_THROWS_AS(child.wait(30s), Interrupted);
        CHECK(child.running());
        status = child.stop_and_wait(5s);
    }
    REQUIRE(status);
    CHECK(ipc::exit_code_of(*status) == 128 + SIGTERM);
}
