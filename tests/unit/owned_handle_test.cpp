#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "cuda/owned_handle.hpp"

using namespace cumemctl;

namespace {

// The handles a test's destroy call was given, in order.
std::vector<int> destroyed_handles;

CUresult destroy_recording(int h) {
    destroyed_handles.push_back(h);
    return CUDA_SUCCESS;
}

}  // namespace

TEST_CASE("OwnedHandle destroys its handle once, and not after release") {
    destroyed_handles.clear();
    {
        OwnedHandle<int> a(destroy_recording, 7);
        CHECK(a.get() == 7);
        CHECK(static_cast<bool>(a));
        OwnedHandle<int> b(destroy_recording);
        CHECK_FALSE(b);  // empty: nothing to destroy
        *b.out() = 8;    // what a create call does
        OwnedHandle<int> c(destroy_recording, 9);
        CHECK(c.release() == 9);
        CHECK_FALSE(c);
    }
    CHECK(destroyed_handles == std::vector<int>{8, 7});
}

TEST_CASE("OwnedHandle moves: the moved-from guard destroys nothing, assignment destroys what it held") {
    destroyed_handles.clear();
    {
        OwnedHandle<int> a(destroy_recording, 1);
        OwnedHandle<int> b(std::move(a));
        CHECK_FALSE(a);  // NOLINT(bugprone-use-after-move): the point of the test
        CHECK(b.get() == 1);
        OwnedHandle<int> c(destroy_recording, 2);
        c = std::move(b);
        CHECK(destroyed_handles == std::vector<int>{2});
        CHECK(c.get() == 1);
    }
    CHECK(destroyed_handles == std::vector<int>{2, 1});
}

TEST_CASE("OwnedHandle::destroy reports the driver's answer and keeps a handle the driver refused") {
    int calls = 0;
    CUresult answer = CUDA_ERROR_INVALID_VALUE;
    {
        OwnedHandle<int> a(
            [&](int) {
                ++calls;
                return answer;
            },
            3);
        CHECK(a.destroy() == CUDA_ERROR_INVALID_VALUE);
        CHECK(a.get() == 3);  // still held: tried once more when the guard goes
        answer = CUDA_SUCCESS;
    }
    CHECK(calls == 2);
    OwnedHandle<int> reset_me(
        [&](int) {
            ++calls;
            return CUDA_SUCCESS;
        },
        4);
    reset_me.reset(5);
    CHECK(calls == 3);
    CHECK(reset_me.get() == 5);
}

TEST_CASE("a guard whose destroy the driver refuses counts a lost handle; one it retries successfully does not") {
    const std::uint64_t start = lost_handle_count();
    int refusals = 1;
    auto flaky = [&refusals](int) { return refusals-- > 0 ? CUDA_ERROR_UNKNOWN : CUDA_SUCCESS; };
    {
        OwnedHandle<int> a(flaky, 3);
        CHECK(a.destroy() == CUDA_ERROR_UNKNOWN);  // refused once: the guard still holds it
    }                                              // the retry when it goes succeeds
    CHECK(lost_handle_count() == start);
    {
        OwnedHandle<int> b([](int) { return CUDA_ERROR_UNKNOWN; }, 4);
    }
    CHECK(lost_handle_count() == start + 1);
}
