#include "base/bounded_call.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <csignal>
#include <thread>

#include <doctest/doctest.h>

using namespace std::chrono_literals;
using cumemctl::call_all_within;
using cumemctl::call_within;

TEST_CASE("call_within: the result of a call that returns, nullopt for one that does not in time") {
    CHECK(call_within<int>(1000ms, [] { return 7; }) == 7);
    auto release = std::make_shared<std::atomic<bool>>(false);
    const auto start = std::chrono::steady_clock::now();
    CHECK_FALSE(call_within<int>(50ms, [release] {
                    while (!release->load()) std::this_thread::sleep_for(1ms);
                    return 1;
                }).has_value());
    CHECK(std::chrono::steady_clock::now() - start < 1000ms);
    release->store(true);
}

TEST_CASE("call_all_within: the calls run at once, and one that hangs does not hold up the others") {
    auto release = std::make_shared<std::atomic<bool>>(false);
    std::vector<std::function<int()>> works;
    for (int i = 0; i < 4; ++i) {
        works.emplace_back([i, release] {
            if (i == 1) {
                while (!release->load()) std::this_thread::sleep_for(1ms);
            } else {
                std::this_thread::sleep_for(400ms);  // one after another, the three would take 1.2 s
            }
            return i * 10;
        });
    }
    const auto start = std::chrono::steady_clock::now();
    const std::vector<std::optional<int>> got = call_all_within<int>(1000ms, std::move(works));
    const auto took = std::chrono::steady_clock::now() - start;
    release->store(true);
    REQUIRE(got.size() == 4);
    CHECK(got[0] == 0);
    CHECK_FALSE(got[1].has_value());
    CHECK(got[2] == 20);
    CHECK(got[3] == 30);
    CHECK(took >= 1000ms);  // it waited for the one that hung, as long as it was told
    CHECK(took < 3000ms);
    CHECK(cumemctl::calls_abandoned());
    CHECK(call_all_within<int>(10ms, {}).empty());
}

TEST_CASE("call_within: SIGTERM during the wait gives the call up and throws Interrupted at once") {
    auto release = std::make_shared<std::atomic<bool>>(false);
    std::thread signaller([] {
        std::this_thread::sleep_for(200ms);
        cumemctl::record_interrupt(SIGTERM);
    });
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_AS(call_within<int>(30000ms,
                                     [release] {
                                         while (!release->load()) std::this_thread::sleep_for(1ms);
                                         return 1;
                                     }),
                    cumemctl::Interrupted);
    CHECK(std::chrono::steady_clock::now() - start < 5000ms);
    signaller.join();
    cumemctl::clear_interrupt();
    release->store(true);
    CHECK(cumemctl::calls_abandoned());
}
