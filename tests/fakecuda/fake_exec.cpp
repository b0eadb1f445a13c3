// The fake driver's linear memory (cuMemAlloc), copies and sets, streams and events. Synchronous work
// runs at once on the host. Asynchronous copies move their bytes at once too, but keep their stream
// busy for the time the copy model gives (fake_copy.hpp), which events record and synchronising waits
// for.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>

#include "fake_context.hpp"
#include "fake_copy.hpp"
#include "fake_locality.hpp"
#include "fake_memory.hpp"

namespace {

std::uintptr_t next_stream = 0x5000;

// An event: when the work before it on its stream ends, on the copy model's clock, and the time
// cuEventElapsedTime reads, which runs ahead by what reads of localized memory were charged.
struct EventTimes {
    bool recorded = false;
    long long at = 0;
    long long shown = 0;
    CUstream stream = nullptr;  // the stream it was recorded on, and that stream's device
    int device = -1;
};
std::map<CUevent, EventTimes>& events() {
    static auto* e = new std::map<CUevent, EventTimes>;
    return *e;
}
std::uintptr_t next_event = 0x9000;

bool valid_range(CUdeviceptr p, size_t n) {
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    return fake::valid_device_range(p, n);
}

// The checks every asynchronous copy makes, in the driver's order: a current context, a stream, then
// the ranges, whose ends `from` and `to` are located for the copy model. A range that must be device
// memory (the typed entry points' device ends) is checked as the synchronous copies check it.
CUresult check_async_copy(CUdeviceptr dst, bool dst_on_device, CUdeviceptr src, bool src_on_device, size_t n,
                          CUstream stream, fake::Place& to, fake::Place& from) {
    if (fake::current_context_device() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (!fake::known_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
    if (dst == 0 || src == 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (dst_on_device && !fake::valid_device_range(dst, n)) return CUDA_ERROR_INVALID_VALUE;
    if (src_on_device && !fake::valid_device_range(src, n)) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = fake::locate(dst, n, to); r != CUDA_SUCCESS) return r;
    return fake::locate(src, n, from);
}

// The call takes no time on the copy model's clock: only the copy does.
CUresult copy_async(CUdeviceptr dst, bool dst_on_device, CUdeviceptr src, bool src_on_device, size_t n,
                    CUstream stream) {
    {
        const fake::ModelPause in_the_driver;
        fake::Place to, from;
        if (const CUresult r = check_async_copy(dst, dst_on_device, src, src_on_device, n, stream, to, from);
            r != CUDA_SUCCESS) {
            return r;
        }
        fake::enqueue_copy(dst, to, src, from, n, stream);
    }
    if (fake::state().sync_copies) fake::sleep_until_model(fake::stream_ready(stream));
    return CUDA_SUCCESS;
}

CUdeviceptr as_device_pointer(const void* p) {
    return reinterpret_cast<CUdeviceptr>(p);
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

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, CUstream stream) {
    FAKE_ENTRY_INIT("cuMemcpyHtoDAsync");
    return copy_async(dst, true, as_device_pointer(src), false, n, stream);
}

CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, CUstream stream) {
    FAKE_ENTRY_INIT("cuMemcpyDtoHAsync");
    return copy_async(as_device_pointer(dst), false, src, true, n, stream);
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream stream) {
    FAKE_ENTRY_INIT("cuMemcpyDtoDAsync");
    return copy_async(dst, true, src, true, n, stream);
}

// Unified addressing: each end is whatever memory it lies in (fake::locate), pageable host memory where
// the fake knows none.
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream stream) {
    FAKE_ENTRY_INIT("cuMemcpyAsync");
    return copy_async(dst, false, src, false, n, stream);
}

// Both ends device memory; both contexts must name devices.
CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t n,
                           CUstream stream) {
    FAKE_ENTRY_INIT("cuMemcpyPeerAsync");
    if (fake::context_device(dst_ctx) < 0 || fake::context_device(src_ctx) < 0) return CUDA_ERROR_INVALID_CONTEXT;
    return copy_async(dst, true, src, true, n, stream);
}

CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
    FAKE_ENTRY_INIT("cuStreamCreate");
    (void)flags;
    if (stream == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const int dev = fake::current_context_device();
    if (dev < 0) return CUDA_ERROR_INVALID_CONTEXT;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    *stream = reinterpret_cast<CUstream>(next_stream++);
    fake::add_stream(*stream, dev);
    return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(CUstream stream) {
    FAKE_ENTRY_INIT("cuStreamDestroy");
    return fake::remove_stream(stream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuStreamSynchronize(CUstream stream) {
    FAKE_ENTRY_INIT("cuStreamSynchronize");
    if (!fake::known_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
    fake::sleep_until_model(fake::stream_ready(stream));
    fake::stream_waited(stream);
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    fake::release_pools_at_sync();
    return CUDA_SUCCESS;
}

CUresult cuStreamQuery(CUstream stream) {
    FAKE_ENTRY_INIT("cuStreamQuery");
    if (!fake::known_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
    return fake::stream_ready(stream) > fake::model_now_ns() ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

// Flags: CU_EVENT_WAIT_DEFAULT or CU_EVENT_WAIT_EXTERNAL (the same to the fake). An event never recorded
// is complete: the stream does not wait.
CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
    FAKE_ENTRY_INIT("cuStreamWaitEvent");
    if ((flags & ~static_cast<unsigned>(CU_EVENT_WAIT_EXTERNAL)) != 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const auto it = events().find(event);
    if (it == events().end() || !fake::known_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
    if (it->second.recorded) fake::stream_wait(stream, it->second.at);
    return CUDA_SUCCESS;
}

// The word must lie in page-locked host memory (cuMemHostGetDevicePointer's address is the host
// address here); device memory is CUDA_ERROR_NOT_SUPPORTED. See fake_copy.hpp for what the hold does.
CUresult cuStreamWaitValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags) {
    FAKE_ENTRY_INIT("cuStreamWaitValue32");
    const unsigned op = flags & ~static_cast<unsigned>(CU_STREAM_WAIT_VALUE_FLUSH);
    if (op > CU_STREAM_WAIT_VALUE_NOR || addr % sizeof(cuuint32_t) != 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (!fake::known_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
    if (fake::pinned_host_span(addr, sizeof(cuuint32_t)) != fake::Span::inside) return CUDA_ERROR_NOT_SUPPORTED;
    fake::hold_streams_until(reinterpret_cast<const std::uint32_t*>(addr), value, op);
    return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent* event, unsigned int flags) {
    FAKE_ENTRY_INIT("cuEventCreate");
    (void)flags;
    if (event == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    *event = reinterpret_cast<CUevent>(next_event++);
    events()[*event] = EventTimes{};
    return CUDA_SUCCESS;
}

// Records when the work enqueued on the stream so far ends (now where it is idle).
CUresult cuEventRecord(CUevent event, CUstream stream) {
    FAKE_ENTRY_INIT("cuEventRecord");
    const fake::ModelPause in_the_driver;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const auto it = events().find(event);
    if (it == events().end() || !fake::known_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
    const long long at = fake::stream_mark(stream);
    // The clock the events read runs ahead by the time charged to reads of localized memory.
    it->second = EventTimes{true, at, at + fake::event_clock_offset_ns(), stream, fake::current_context_device()};
    return CUDA_SUCCESS;
}

CUresult cuEventSynchronize(CUevent event) {
    FAKE_ENTRY_INIT("cuEventSynchronize");
    EventTimes times;
    {
        std::lock_guard<std::mutex> lock(fake::state().mutex);
        const auto it = events().find(event);
        if (it == events().end()) return CUDA_ERROR_INVALID_HANDLE;
        times = it->second;
    }
    fake::sleep_until_model(times.at);
    if (times.recorded) fake::event_waited(times.stream, times.device, times.at);
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    fake::release_pools_at_sync();
    return CUDA_SUCCESS;
}

CUresult cuEventQuery(CUevent event) {
    FAKE_ENTRY_INIT("cuEventQuery");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const auto it = events().find(event);
    if (it == events().end()) return CUDA_ERROR_INVALID_HANDLE;
    return it->second.at > fake::model_now_ns() ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

// As the driver: an event never recorded is CUDA_ERROR_INVALID_HANDLE, one whose work has not ended
// CUDA_ERROR_NOT_READY.
CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
    FAKE_ENTRY_INIT("cuEventElapsedTime");
    if (ms == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const auto a = events().find(start);
    const auto b = events().find(end);
    if (a == events().end() || b == events().end()) return CUDA_ERROR_INVALID_HANDLE;
    if (!a->second.recorded || !b->second.recorded) return CUDA_ERROR_INVALID_HANDLE;
    const long long now = fake::model_now_ns();
    if (a->second.at > now || b->second.at > now) return CUDA_ERROR_NOT_READY;
    *ms = static_cast<float>(static_cast<double>(b->second.shown - a->second.shown) / 1e6);
    return CUDA_SUCCESS;
}

CUresult cuEventDestroy_v2(CUevent event) {
    FAKE_ENTRY_INIT("cuEventDestroy");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    return events().erase(event) == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

}  // extern "C"
