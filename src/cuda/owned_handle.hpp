// RAII for driver handles: one guard type for every kind of handle (streams, events, modules,
// allocations, blocks of a pool, mappings, reserved ranges, primary and green contexts). Where a StepLog
// records the release, the destroy call is its undo step (gpu/le's memory); an undo that is not one
// handle's destroy (gpu/le's endpoint ids, endpoints and bindings) is a ScopeExit (base/scope_exit.hpp).
// It holds a handle and the call that destroys it, destroys it when the guard goes (errors ignored: this
// runs on error paths and at exit), and can be moved but not copied. The handle itself is private: get()
// reads it, out() is where a create call writes it, release() gives it up, reset() and destroy() end it
// early.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>

#include <cuda.h>

namespace cumemctl {

// How many handles this thread's guards could not give back: a guard whose last destroy the driver
// refused (the handle is then lost until the process ends). Snapshots read it before and after an
// operation, so that a leak verdict rests on what this process made and released.
inline std::uint64_t& lost_handle_count() {
    thread_local std::uint64_t count = 0;
    return count;
}

// Owns one driver handle (CUstream, CUevent, CUmodule, CUdeviceptr, an allocation handle, a mapped
// or reserved address). `Destroy` takes the handle and returns the driver's answer; for calls that
// need more than the handle (cuMemUnmap, cuMemAddressFree) it captures the rest.
template <typename Handle>
class OwnedHandle {
public:
    using Destroy = std::function<CUresult(Handle)>;

    OwnedHandle() = default;
    // An empty guard that will destroy with `destroy` what a create call writes through out().
    explicit OwnedHandle(Destroy destroy) : destroy_(std::move(destroy)) {}
    // Takes ownership of `handle`, which the driver returned.
    OwnedHandle(Destroy destroy, Handle handle) : destroy_(std::move(destroy)), handle_(handle) {}
    OwnedHandle(OwnedHandle&& other) noexcept
        : destroy_(std::move(other.destroy_)), handle_(std::exchange(other.handle_, Handle{})) {}
    OwnedHandle& operator=(OwnedHandle&& other) noexcept {
        if (this != &other) {
            reset();
            destroy_ = std::move(other.destroy_);
            handle_ = std::exchange(other.handle_, Handle{});
        }
        return *this;
    }
    OwnedHandle(const OwnedHandle&) = delete;
    OwnedHandle& operator=(const OwnedHandle&) = delete;
    ~OwnedHandle() { reset(); }

    // The handle (empty: Handle{}).
    Handle get() const { return handle_; }
    // Whether a handle is held.
    explicit operator bool() const { return handle_ != Handle{}; }
    // Where a create call writes the handle; anything held before is destroyed first. A failed
    // create leaves it empty, and nothing is destroyed.
    Handle* out() {
        reset();
        return &handle_;
    }
    // Gives up ownership: the handle is no longer destroyed here.
    Handle release() { return std::exchange(handle_, Handle{}); }
    // Destroys the handle now and holds `next` instead; a refused destroy is not thrown (this runs on
    // error paths) but counted in lost_handle_count().
    void reset(Handle next = Handle{}) {
        if (handle_ != Handle{} && destroy_ && destroy_(handle_) != CUDA_SUCCESS) ++lost_handle_count();
        handle_ = next;
    }
    // Destroys the handle now and returns the driver's answer; when the driver refuses, the guard
    // still holds the handle and tries once more when it goes.
    CUresult destroy() {
        if (handle_ == Handle{} || !destroy_) return CUDA_SUCCESS;
        const CUresult r = destroy_(handle_);
        if (r == CUDA_SUCCESS) handle_ = Handle{};
        return r;
    }

private:
    Destroy destroy_;
    Handle handle_{};
};

}  // namespace cumemctl
