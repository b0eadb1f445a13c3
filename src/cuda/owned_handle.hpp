// RAII for driver handles: a handle and the entry point that destroys it, called when the owner goes
// (errors ignored: this runs on error paths and at exit), unless the handle was released first.
#pragma once

#include <utility>

#include <cuda.h>

namespace cumemctl {

// Owns one driver handle (CUstream, CUevent, CUmodule, CUdeviceptr, ...). Create it empty with its
// destroy entry point, then let the create call write `handle`: a failed create leaves it empty and
// nothing is destroyed.
template <typename Handle>
class OwnedHandle {
public:
    using Destroy = CUresult (*)(Handle);
    explicit OwnedHandle(Destroy destroy) : destroy_(destroy) {}
    OwnedHandle(const OwnedHandle&) = delete;
    OwnedHandle& operator=(const OwnedHandle&) = delete;
    ~OwnedHandle() {
        if (handle != Handle{} && destroy_ != nullptr) destroy_(handle);
    }
    // Gives up ownership: the handle is no longer destroyed here.
    Handle release() { return std::exchange(handle, Handle{}); }

    Handle handle{};

private:
    Destroy destroy_;
};

}  // namespace cumemctl
