// A device's primary context, retained and current on this thread for as long as the guard lives:
// what operations that need a context (mapping, kernels, free memory) run in.
#pragma once

#include <functional>

#include "base/scope_exit.hpp"
#include "cuda/driver_api.hpp"
#include "cuda/owned_handle.hpp"

namespace cumemctl::gpu {

// Retains the primary context of `device` and makes it current; on destruction makes the context
// that was current before current again (none, usually; the owning device's when a peer device
// checks memory) and releases it. Throws Error (diagnosed by the caller) when either call fails.
class PrimaryContext {
public:
    PrimaryContext(const DriverApi& api, int device);

    int device() const { return device_; }
    // The retained context.
    CUcontext get() const { return context_.get(); }

private:
    int device_;
    CUcontext previous_ = nullptr;              // current when this one was made
    OwnedHandle<CUcontext> context_;            // retained and current; released (cuDevicePrimaryCtxRelease) last
    ScopeExit<std::function<void()>> restore_;  // makes `previous_` current again, before the release
};

// The current context's free and total device memory (cuMemGetInfo). Throws Error on failure.
struct DeviceMemory {
    std::size_t free = 0;
    std::size_t total = 0;
};
DeviceMemory current_device_memory(const DriverApi& api);

}  // namespace cumemctl::gpu
