#include "base/bounded_call.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
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
                std::this_thread::sleep_for(100ms);  // run one after another, the three would take 300 ms
            }
            return i * 10;
        });
    }
    const auto start = std::chrono::steady_clock::now();
    const std::vector<std::optional<int>> got = call_all_within<int>(250ms, std::move(works));
    const auto took = std::chrono::steady_clock::now() - start;
    release->store(true);
    REQUIRE(got.size() == 4);
    CHECK(got[0] == 0);
    CHECK_FALSE(got[1].has_value());
    CHECK(got[2] == 20);
    CHECK(got[3] == 30);
    CHECK(took >= 250ms);  // it waited for the one that hung, as long as it was told
    CHECK(took < 2000ms);
    CHECK(call_all_within<int>(10ms, {}).empty());
}
