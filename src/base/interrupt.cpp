#include "base/interrupt.hpp"

#include <signal.h>

#include <atomic>

namespace cumemctl {
namespace {

// The recorded signal; lock-free, so that the handler may write it.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_interrupt(int signal) {
    record_interrupt(signal);
}

}  // namespace

ExitCode Interrupted::exit_code() const {
    return signal_ == SIGTERM ? ExitCode::terminated : ExitCode::interrupted;
}

const char* Interrupted::what() const noexcept {
    return signal_ == SIGTERM ? "terminated by SIGTERM" : "interrupted by SIGINT";
}

void install_interrupt_handler() {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: waits wake up
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

int interrupt_signal() {
    return g_signal.load(std::memory_order_relaxed);
}

void check_interrupted() {
    if (const int s = interrupt_signal(); s != 0) throw Interrupted(s);
}

void clear_interrupt() {
    g_signal.store(0, std::memory_order_relaxed);
}

void record_interrupt(int signal) {
    // The first signal decides the exit code.
    int expected = 0;
    g_signal.compare_exchange_strong(expected, signal, std::memory_order_relaxed);
}

}  // namespace cumemctl
