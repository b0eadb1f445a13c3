// A device's primary context, retained and current on this thread for as long as the guard lives:
// what operations that need a context (mapping, kernels, free memory) run in.
#pragma once

#include "cuda/driver_api.hpp"

namespace cumemctl::gpu {

// Retains the primary context of `device` and makes it current; on destruction makes the context
// that was current before current again (none, usually; the owning device's when a peer device
// checks memory) and releases it. Throws Error (diagnosed by the caller) when either call fails.
class PrimaryContext {
public:
    PrimaryContext(const DriverApi& api, int device);
    ~PrimaryContext();
    PrimaryContext(const PrimaryContext&) = delete;
    PrimaryContext& operator=(const PrimaryContext&) = delete;

    int device() const { return device_; }
    // The retained context.
    CUcontext get() const { return context_; }

private:
    const DriverApi* api_;
    int device_;
    CUcontext context_ = nullptr;
    CUcontext previous_ = nullptr;  // current when this one was made
};

// The current context's free and total device memory (cuMemGetInfo). Throws Error on failure.
struct DeviceMemory {
    std::size_t free = 0;
    std::size_t total = 0;
};
DeviceMemory current_device_memory(const DriverApi& api);

}  // namespace cumemctl::gpu
