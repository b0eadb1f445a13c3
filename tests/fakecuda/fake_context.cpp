// The fake driver's contexts: one primary context per device, a current context per thread, and the
// memory information that needs one.
#include "fake_context.hpp"

#include <algorithm>
#include <cstdlib>

#include "fake_copy.hpp"
#include "fake_locality.hpp"
#include "fake_memory.hpp"

namespace fake {
namespace {
thread_local int current_device = -1;
thread_local int current_domain = -1;  // the SMs of a green context's locality domain; -1 for all
}  // namespace

int current_context_device() {
    return current_device;
}

int current_context_domain() {
    return current_domain;
}

}  // namespace fake

namespace {
// A fake CUcontext is the device ordinal plus one, as a pointer; a green context's (fake_locality.cpp)
// has its locality domain plus two above bit 16 (1: the whole device).
CUcontext context_of(int ordinal) {
    return reinterpret_cast<CUcontext>(static_cast<std::intptr_t>(ordinal + 1));
}
thread_local CUcontext current_context = nullptr;  // as set, a green context's included
int device_of(CUcontext ctx) {
    return static_cast<int>(reinterpret_cast<std::intptr_t>(ctx) & 0xffff) - 1;
}
int domain_of(CUcontext ctx) {
    const auto green = static_cast<int>(reinterpret_cast<std::intptr_t>(ctx) >> 16);
    return green == 0 ? -1 : green - 2;
}
}  // namespace

namespace fake {
CUcontext current_context_handle() {
    return current_device < 0 ? nullptr : current_context;
}

int context_device(CUcontext ctx) {
    if (ctx == nullptr) return -1;
    const int ordinal = device_of(ctx);
    return device(ordinal) == nullptr ? -1 : ordinal;
}
}  // namespace fake

extern "C" {

CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
    FAKE_ENTRY_INIT("cuDevicePrimaryCtxRetain");
    fake::Device* d = fake::device(dev);
    if (d == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    // A device whose profile says "held_by_other_process": true is in exclusive-process compute mode and
    // another process has its context: the driver refuses a second one.
    if (d->extra.value("held_by_other_process", false)) return CUDA_ERROR_DEVICE_UNAVAILABLE;
    bool create = false;
    {
        std::lock_guard<std::mutex> lock(fake::state().mutex);
        create = d->context_refs == 0;
    }
    // A new context takes the device memory of its "context_bytes" (0 unless the profile says): on a device
    // that others have filled the driver has none for it.
    if (create && d->extra.value("context_bytes", std::uint64_t{0}) > d->total - d->used)
        return CUDA_ERROR_OUT_OF_MEMORY;
    // Making a context costs its time, one at a time (FAKECUDA_COST_MS).
    if (create) fake::spend_serialised(fake::state().context_ms);
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    ++d->context_refs;
    *pctx = context_of(dev);
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
    FAKE_ENTRY_INIT("cuDevicePrimaryCtxRelease");
    fake::Device* d = fake::device(dev);
    if (d == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    bool last = false;
    {
        std::lock_guard<std::mutex> lock(fake::state().mutex);
        if (d->context_refs == 0) return CUDA_ERROR_INVALID_CONTEXT;
        last = --d->context_refs == 0;
    }
    // Releasing the last reference ends the context: that costs its time too, one at a time.
    if (last) fake::spend_serialised(fake::state().release_ms);
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
    FAKE_ENTRY_INIT("cuCtxSetCurrent");
    if (ctx == nullptr) {
        fake::current_device = -1;
        fake::current_domain = -1;
        current_context = nullptr;
        return CUDA_SUCCESS;
    }
    if (fake::device(device_of(ctx)) == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    fake::current_device = device_of(ctx);
    fake::current_domain = domain_of(ctx);
    current_context = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext* pctx) {
    FAKE_ENTRY_INIT("cuCtxGetCurrent");
    if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pctx = fake::current_device < 0 ? nullptr : current_context;
    return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize() {
    FAKE_ENTRY_INIT("cuCtxSynchronize");
    if (fake::current_device < 0) return CUDA_ERROR_INVALID_CONTEXT;
    // Until every stream of the context's device is done (fake_copy.hpp).
    fake::sleep_until_model(fake::device_ready(fake::current_device));
    fake::stream_waited(nullptr, fake::current_device);
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    fake::release_pools_at_sync();
    return CUDA_SUCCESS;
}

CUresult cuMemGetInfo_v2(size_t* free, size_t* total) {
    FAKE_ENTRY_INIT("cuMemGetInfo");
    fake::Device* d = fake::device(fake::current_device);
    if (d == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    if (free == nullptr || total == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    *free = d->total - d->used;
    // FAKECUDA_OTHER_PROCESS_DELTA=BYTES (signed): every call after the first finds free memory moved by
    // that much more, as another process allocating (or freeing) on the GPU, or the driver's per-context
    // bookkeeping, would move it between two reads.
    static long long calls = 0;
    if (++calls > 1) {
        if (const char* delta = std::getenv("FAKECUDA_OTHER_PROCESS_DELTA"); delta != nullptr && *delta != '\0') {
            const long long moved = std::strtoll(delta, nullptr, 10) * (calls - 1);
            const long long now = static_cast<long long>(*free) + moved;
            *free = static_cast<size_t>(std::clamp<long long>(now, 0, static_cast<long long>(d->total)));
        }
    }
    *total = d->total;
    return CUDA_SUCCESS;
}

}  // extern "C"
