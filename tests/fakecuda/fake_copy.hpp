// The fake driver's copy-time model. An asynchronous copy moves its bytes at once, on the host, but
// keeps its stream busy for as long as the copy would take on the machine the profile describes, so
// that events time it at the profile's rate and synchronising waits for it; the fake NVML reads from
// the model whether a device's link is busy (its current PCIe generation) and how many copies it has
// carried (its replay counter).
//
// Rates: a device's optional "copy" object, in GB/s (1e9 bytes a second); each value left out takes
// the default shown, an H200 SXM on PCIe Gen5 x16:
//   "copy": {"h2d_gbps": 55.0, "d2h_gbps": 55.5, "both_gbps": 101.0, "d2d_gbps": 2050.0,
//            "pageable_h2d_gbps": 20.0, "pageable_d2h_gbps": 18.0, "remote_numa_factor": 0.7,
//            "peer_gbps": 350.0, "noisy_copies": 0, "noisy_factor": 0.25,
//            "uplink": 0}
// (This project measured device copies of an H200 at 4.3 TB/s of traffic, 2150 GB/s copied,
// docs/hardware/2026-12-01-run15.md, and 353 to 374 GB/s between two H200s over NVLink, 2026-11-30-run8.md;
// the PCIe figures are an H200's usual ones, not measured here.)
// - host <-> device: page-locked host memory (cuMemHostAlloc, a host or host-NUMA cuMemCreate mapping,
//   a host pool's block) at h2d_gbps / d2h_gbps; other host memory (malloc: pageable) at
//   pageable_h2d_gbps / pageable_d2h_gbps. While the device's link carries a copy the other way, each
//   direction runs at both_gbps / 2 (its own rate where that is lower): two streams copying opposite
//   ways at once move about both_gbps together.
// - host memory on a NUMA node other than the device's (CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID): the rate
//   times remote_numa_factor. Host-NUMA memory carries its node; other host memory counts as the
//   device's own node.
// - device -> the same device: d2d_gbps bytes copied a second (the memory moves twice that).
// - device -> another device: the source's peer_gbps where the profile's "peers" lets either reach the
//   other; else staged through host memory, at 1 / (1 / d2h_gbps + 1 / h2d_gbps).
// - host -> host: no time.
// - a shared uplink: devices whose copy.uplink is the same number sit behind one PCIe switch and its one
//   uplink to the host: their h2d copies take turns on it, and so do their d2h copies, so that each
//   reaches its rate alone and two together share it.
// - noise: the device's first noisy_copies host copies (h2d or d2h, counted as enqueued) run at
//   noisy_factor of their rate, as a copy beside another tenant's burst does once.
//
// Timing: a copy starts at the latest of now, its stream's ready time and the end of what its device's
// link already carries the same way (h2d, d2h, d2d or peer: copies on several streams of a device take
// turns, so that together they reach the rate, not a multiple of it), and ends bytes / rate later, when
// its stream is ready. cuEventRecord records the stream's ready time (now where it is idle);
// cuStreamWaitEvent makes a stream ready no sooner than the event; cuEventSynchronize,
// cuStreamSynchronize and cuCtxSynchronize (every stream of the context's device) sleep until then,
// and cuEventQuery, cuStreamQuery and cuEventElapsedTime answer CUDA_ERROR_NOT_READY before. Every
// copy returns at once, one to pageable host memory too (the driver's returns only once done: waiting
// here would add the host's wake-up time to the next copy's, and the rate would no longer be the
// profile's). A copy's rate is fixed when it is enqueued: a copy the other way enqueued later does not slow it (the
// later one runs at both_gbps / 2 while they overlap). The null stream is one more stream of the current context's
// device: it does not wait for the others, as the legacy default stream would.
//
// The clock is the steady clock, paused while a thread is in an asynchronous copy or cuEventRecord
// (the host moves the bytes far slower than the modelled link, and slower still under sanitizers or
// an emulator): the times do not depend on the machine that runs the tests, so that a test may expect
// a rate to within a percent or two where each copy takes the model longer than the caller's own work
// between two calls. A stream that waits on a host word (cuStreamWaitValue32, page-locked host memory
// through cuMemHostGetDevicePointer; device memory is CUDA_ERROR_NOT_SUPPORTED here) stops the clock
// until the word lets it go, which the clock sees at its next reading: the fake has one timeline, so
// the streams that did not wait stand still too, for as long as the host takes to queue (what the
// gate is for: GPUs that start together whatever the host thread's scheduling).
//
// Link state, for the fake NVML (tests/fakenvml/fake_nvml.cpp): a device's link is busy while a copy
// that touches its memory (at either end) is under way, and each such copy counts once it has ended.
// The fake NVML finds this library among the objects its process has loaded (dl_iterate_phdr, then
// dlopen with RTLD_NOLOAD and dlsym of fakecuda_link_state), so that the two agree however each was
// loaded (cumemctl loads both RTLD_LOCAL, from any path); without the fake driver every link is idle.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fake_state.hpp"

namespace fake {

// The model's clock, in nanoseconds.
long long model_now_ns();
// Sleeps until the model's clock reaches `t` (at once where it has).
void sleep_until_model(long long t);

// cuStreamWaitValue32: holds the streams until the host word at `word` meets the condition (op: a
// CU_STREAM_WAIT_VALUE_* other than FLUSH, against `value`), by stopping the model's one clock until
// then; at once where it already does. What the host queues meanwhile starts when the word lets it go.
void hold_streams_until(const std::uint32_t* word, std::uint32_t value, unsigned op);
// Forgets the gates whose word lies in [begin, end): host memory freed (cuMemFreeHost).
void forget_gates(std::uintptr_t begin, std::uintptr_t end);

// Pauses the model's clock while it lives (nested pauses and other threads' pauses make one).
class ModelPause {
public:
    ModelPause();
    ~ModelPause();
    ModelPause(const ModelPause&) = delete;
    ModelPause& operator=(const ModelPause&) = delete;
};

// A stream belongs to the device whose context was current when it was made. The null stream (and
// CU_STREAM_LEGACY, CU_STREAM_PER_THREAD) is the current context's device's own.
void add_stream(CUstream stream, int device);
// Forgets a made stream; false for any other handle. Work enqueued on it still runs to its end.
bool remove_stream(CUstream stream);
// Whether a handle is a made stream or the null stream.
bool known_stream(CUstream stream);
// When the work enqueued on a stream so far ends, on the model's clock (in the past where it is idle;
// 0 for the null stream without a current context).
long long stream_ready(CUstream stream);
// Makes a stream ready no sooner than `t` (cuStreamWaitEvent).
void stream_wait(CUstream stream, long long t);
// Where an event recorded on the stream now stands, and from then on work enqueued there queues right
// behind the work before it. A real driver's queue runs far ahead of the host, so a thread that the
// host preempts between two copies leaves no gap between them on the GPU: the model keeps no gap
// either, until the host waits for the stream (stream_waited), after which work starts no sooner
// than the host enqueues it.
long long stream_mark(CUstream stream);
// The host waited for the stream (or every stream of `device`, stream null): see stream_mark.
void stream_waited(CUstream stream, int device = -1);
// The host waited for an event recorded at `at` on `stream` (of `device`, for the null stream): that
// stream is waited for where its work ends by then. Other streams are not: a wait on one thread tells
// nothing about the streams another thread fills.
void event_waited(CUstream stream, int device, long long at);
// When the work on every stream of a device ends.
long long device_ready(int device);

// One end of a copy: a device's memory, or host memory (page-locked or not, on a NUMA node or not).
struct Place {
    int device = -1;  // the device whose memory it is; -1 for host memory
    bool pinned = false;
    int numa = -1;  // host memory's NUMA node where the memory says (host-NUMA), else -1
};

// Where [p, p + size) lies: in a linear block (cuMemAlloc, a pool), a cuMemCreate mapping, a
// cuMemHostAlloc allocation, or else pageable host memory. CUDA_ERROR_INVALID_VALUE for a range that
// runs past the end of what it starts in, or lies in memory no device may access. Caller holds
// state().mutex.
CUresult locate(CUdeviceptr p, std::size_t size, Place& place);

// Copies `size` bytes from src to dst now and keeps `stream` busy for the copy's time (above). Takes the
// locks it needs: the caller holds none.
void enqueue_copy(CUdeviceptr dst, const Place& to, CUdeviceptr src, const Place& from, std::size_t size,
                  CUstream stream);

}  // namespace fake
