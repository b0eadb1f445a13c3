// The fake driver's linear memory (cuMemAlloc), copies and sets, streams and events. Work runs at once
// on the host: a stream is only a handle, and synchronising always succeeds.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>

#include "fake_context.hpp"
#include "fake_locality.hpp"
#include "fake_memory.hpp"

namespace {

std::set<CUstream>& streams() {
    static auto* s = new std::set<CUstream>;
    return *s;
}
std::uintptr_t next_stream = 0x5000;

// An event is the time it was recorded, in nanoseconds of the steady clock (0: never recorded).
std::map<CUevent, long long>& events() {
    static auto* e = new std::map<CUevent, long long>;
    return *e;
}
std::uintptr_t next_event = 0x9000;

bool valid_stream(CUstream s) {
    return s == nullptr || streams().count(s) != 0;
}

bool valid_range(CUdeviceptr p, size_t n) {
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    return fake::valid_device_range(p, n);
}

}  // namespace

extern "C" {

CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
    FAKE_ENTRY_INIT("cuMemAlloc");
    if (dptr == nullptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    const int dev = fake::current_context_device();
    if (dev < 0) return CUDA_ERROR_INVALID_CONTEXT;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (!fake::take_device_memory(dev, bytesize)) return CUDA_ERROR_OUT_OF_MEMORY;
    // Host-page aligned, as the driver's own blocks of this size are: dma-buf export needs it.
    void* p = std::aligned_alloc(4096, (bytesize + 4095) / 4096 * 4096);
    if (p == nullptr) {
        fake::give_device_memory(dev, bytesize);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *dptr = reinterpret_cast<CUdeviceptr>(p);
    // Without peer access enabled, only the allocating context's device may touch it.
    fake::add_linear_block(*dptr, bytesize, fake::device_bit(dev), dev);
    return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr dptr) {
    FAKE_ENTRY_INIT("cuMemFree");
    const int dev = fake::current_context_device();
    if (dev < 0) return CUDA_ERROR_INVALID_CONTEXT;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (fake::free_pool_pointer(dptr)) return CUDA_SUCCESS;
    const std::size_t size = fake::remove_linear_block(dptr);
    if (size == 0) return CUDA_ERROR_INVALID_VALUE;
    fake::give_device_memory(dev, size);
    std::free(reinterpret_cast<void*>(dptr));
    return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
    FAKE_ENTRY_INIT("cuMemcpyDtoH");
    if (dst == nullptr || !valid_range(src, n)) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(dst, reinterpret_cast<const void*>(src), n);
    return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
    FAKE_ENTRY_INIT("cuMemcpyHtoD");
    if (src == nullptr || !valid_range(dst, n)) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(reinterpret_cast<void*>(dst), src, n);
    return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
    FAKE_ENTRY_INIT("cuMemcpyDtoD");
    if (!valid_range(dst, n) || !valid_range(src, n)) return CUDA_ERROR_INVALID_VALUE;
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
    return CUDA_SUCCESS;
}

CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t n) {
    FAKE_ENTRY_INIT("cuMemsetD8");
    if (!valid_range(dst, n)) return CUDA_ERROR_INVALID_VALUE;
    std::memset(reinterpret_cast<void*>(dst), value, n);
    return CUDA_SUCCESS;
}

CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int value, size_t n) {
    FAKE_ENTRY_INIT("cuMemsetD32");
    if (dst % 4 != 0 || !valid_range(dst, n * 4)) return CUDA_ERROR_INVALID_VALUE;
    auto* p = reinterpret_cast<unsigned int*>(dst);
    for (size_t i = 0; i < n; ++i) p[i] = value;
    return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
    FAKE_ENTRY_INIT("cuStreamCreate");
    (void)flags;
    if (stream == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (fake::current_context_device() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    *stream = reinterpret_cast<CUstream>(next_stream++);
    streams().insert(*stream);
    return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(CUstream stream) {
    FAKE_ENTRY_INIT("cuStreamDestroy");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    return streams().erase(stream) == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuStreamSynchronize(CUstream stream) {
    FAKE_ENTRY_INIT("cuStreamSynchronize");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (!valid_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
    fake::release_pools_at_sync();
    return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent* event, unsigned int flags) {
    FAKE_ENTRY_INIT("cuEventCreate");
    (void)flags;
    if (event == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    *event = reinterpret_cast<CUevent>(next_event++);
    events()[*event] = 0;
    return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent event, CUstream stream) {
    FAKE_ENTRY_INIT("cuEventRecord");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const auto it = events().find(event);
    if (it == events().end() || !valid_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
    // The clock the events read runs ahead by the time charged to reads of localized memory.
    it->second =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count() +
        fake::event_clock_offset_ns();
    return CUDA_SUCCESS;
}

CUresult cuEventSynchronize(CUevent event) {
    FAKE_ENTRY_INIT("cuEventSynchronize");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (events().count(event) == 0) return CUDA_ERROR_INVALID_HANDLE;
    fake::release_pools_at_sync();
    return CUDA_SUCCESS;
}

CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
    FAKE_ENTRY_INIT("cuEventElapsedTime");
    if (ms == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const auto a = events().find(start);
    const auto b = events().find(end);
    if (a == events().end() || b == events().end()) return CUDA_ERROR_INVALID_HANDLE;
    if (a->second == 0 || b->second == 0) return CUDA_ERROR_INVALID_HANDLE;
    *ms = static_cast<float>(static_cast<double>(b->second - a->second) / 1e6);
    return CUDA_SUCCESS;
}

CUresult cuEventDestroy_v2(CUevent event) {
    FAKE_ENTRY_INIT("cuEventDestroy");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    return events().erase(event) == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

}  // extern "C"
