// A small guard for what is neither one driver handle (cuda/owned_handle's OwnedHandle) nor a descriptor
// (util/unique_fd's UniqueFd): runs a function when the scope ends, on every way out, a failure or a stop
// included. It holds the context to make current again, the synchronisation after a pool's blocks are
// freed, and the StepLog undo steps of gpu/le's endpoint ids, endpoints and bindings. As a member it is
// made after the call it undoes, so a constructor that fails undoes nothing it did not do.
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
