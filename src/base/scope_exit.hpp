// A small guard for what is neither a driver handle (cuda/owned_handle's OwnedHandle) nor a descriptor
// (util/unique_fd's UniqueFd), such as the context to make current again: runs a function when the scope
// ends, on every way out, a failure or a stop included.
#pragma once

#include <utility>

namespace cumemctl {

// Runs `f` (which must not throw) when it goes. Neither copied nor moved.
template <class F>
class ScopeExit {
public:
    explicit ScopeExit(F f) : f_(std::move(f)) {}
    ~ScopeExit() { f_(); }
    ScopeExit(const ScopeExit&) = delete;
    ScopeExit& operator=(const ScopeExit&) = delete;

private:
    F f_;
};

}  // namespace cumemctl
