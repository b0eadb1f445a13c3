// Copies timed with events on the copy engines of one GPU: host<->device from pinned memory (each way
// and both at once), from pageable memory, from host memory placed on a NUMA node (cuMemCreate at a
// host-NUMA location), device->device, and GPU->GPU. What each figure counts is the bytes that cross
// its path: a device->device copy reads and writes each byte, so it counts twice.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "cuda/driver_api.hpp"
#include "gpu/bandwidth/host_placement.hpp"

namespace cumemctl::gpu {

// The paths, in the order they are measured and reported.
enum class CopyPath { host_to_device, device_to_host, both, device_to_device, peer };

// Where the host side of a copy lives.
enum class HostMemory { pinned, pageable, numa };

// "h2d", "d2h", "both", "d2d", "peer": the names --json and Prometheus use.
const char* path_name(CopyPath path);

// How a figure counts its bytes: the bytes copied (h2d, d2h, peer), both directions summed (both), or
// each byte read plus written (d2d). nvbandwidth, like the CUDA samples' h2d and d2h, counts bytes
// copied, per direction: a figure's `copied` says that number beside it.
enum class ByteCount { copied, both_directions, read_and_written };

// How figures of `path` count their bytes.
ByteCount byte_count(CopyPath path);

// "copied", "both_directions", "read_and_written": the names --json, CSV and Prometheus use.
const char* count_name(ByteCount count);

// One direction of a figure counted as nvbandwidth counts it: the bytes copied that way and the seconds
// from the start until that direction's copies ended.
struct CopiedFigure {
    CopyPath direction = CopyPath::host_to_device;  // h2d, d2h, d2d or peer
    std::uint64_t bytes = 0;
    double seconds = 0;

    double gbps() const { return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0; }
};

// One figure: a path, its host memory (host paths), the NUMA node (numa) or peer device (peer), the
// bytes that crossed the path and the seconds the events measured.
struct CopyFigure {
    CopyPath path = CopyPath::host_to_device;
    HostMemory host = HostMemory::pinned;
    std::optional<int> numa_node;  // where the host memory is: numa's node, or the node pinned and pageable
                                   // buffers were allocated on (the GPU's, the thread bound to it)
    std::optional<int> peer;       // peer: the other GPU
    std::uint64_t bytes = 0;       // counted: both directions for both, read plus written for d2d
    int iterations = 0;
    double seconds = 0;                // both: what its bytes take at its two directions' rates summed
    std::vector<CopiedFigure> copied;  // per direction, bytes copied (both: h2d then d2h)
    bool concurrent = false;           // measured while every selected GPU copied the same way

    // bytes / seconds in GB/s (1e9 bytes a second); 0 where no time was measured.
    double gbps() const { return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0; }
};

// What to measure: the bytes of each copy, how many are timed (after one untimed), and which paths.
struct CopyRequest {
    std::uint64_t size = 256ULL << 20;
    int iterations = 10;
    bool host = true;             // pinned h2d, d2h
    bool both = true;             // pinned, both directions at once
    bool device = true;           // d2d
    bool pageable = false;        // pageable h2d, d2h
    std::vector<int> numa_nodes;  // h2d, d2h from cuMemCreate memory on each of these host NUMA nodes
    std::vector<int> peers;       // device -> each of these GPUs
    // Where pinned and pageable buffers are allocated: the thread is bound to the node (its CPUs and
    // memory policy) while it allocates and copies. Absent: wherever the thread runs.
    std::optional<HostPlacement> placement;
};

// How the thread was bound for the copies: the node, or what the kernel refused.
struct BindingOutcome {
    std::optional<int> node;  // the node pinned and pageable buffers were allocated on
    std::string error;        // what the kernel refused (the figures then name no node)
};

// A host NUMA node whose memory the driver refused (a node without memory, or one the GPU cannot map).
struct NumaRefusal {
    int node = 0;
    Problem problem;
};

// Called before each figure is measured, with what is about to be measured ("h2d pinned").
using CopyProgress = std::function<void(const std::string& what)>;

// Measures the request on `device`, whose primary context is current (and each peer's primary context
// retained for its copy), appending each figure to `out` once measured. Allocates what it needs and
// frees it, whatever happens. Throws Error on a failed call; a NUMA node whose memory cannot be made or
// mapped goes to `refused` where it is given (its figures left out), else throws too. Copies are cut
// into pieces and waited for without blocking: once SIGINT or SIGTERM came it throws Interrupted
// within a fraction of a second, `out` holding the figures measured before.
// With the request's placement, the thread is bound to its node while it allocates and copies, and
// `binding` (where given) says how that went.
void measure_copies(const DriverApi& api, int device, const CopyRequest& request, std::vector<CopyFigure>& out,
                    const CopyProgress& progress = {}, std::vector<NumaRefusal>* refused = nullptr,
                    BindingOutcome* binding = nullptr);

// Every GPU of `devices` copies at once, as nvbandwidth's host_to_all and all_to_host do: h2d from
// pinned memory on all of them together (after one untimed copy each way), then d2h together. Each
// GPU's buffers are made in its primary context with the thread bound to its placement (`placements`,
// by index; absent: none). Every GPU's stream is filled as it has room, and every GPU goes on copying
// until all have ended their timed copies, so that each is timed while the others copy throughout (as
// nvbandwidth times one GPU beside the others' copies); each GPU's time is read from its own events.
// Returns each GPU's h2d and d2h figures (concurrent), in the order of `devices`, and how each GPU's
// buffers were placed in `bindings` (where given). What shares a link (a PCIe switch's uplink, the
// host's memory) shows as GPUs that each reach less than alone. Frees everything, whatever happens;
// throws Error, and Interrupted between two pieces.
std::vector<std::vector<CopyFigure>> measure_concurrent(const DriverApi& api, const std::vector<int>& devices,
                                                        const CopyRequest& request,
                                                        const std::vector<std::optional<HostPlacement>>& placements,
                                                        std::vector<BindingOutcome>* bindings = nullptr);

// Keeps the host->device link busy with copies of `size` bytes from pinned memory, `batch` copies at
// a time and two batches queued, calling `sample` about every quarter millisecond while they run,
// until it returns true or `seconds` have passed; then waits for the copies queued and returns their
// figure. For reading a link's state under load (an idle link drops its generation); the context of
// the device is current. Throws Error, and Interrupted once SIGINT or SIGTERM came.
CopyFigure copy_while(const DriverApi& api, std::uint64_t size, int batch, double seconds,
                      const std::function<bool()>& sample);

// The host NUMA nodes with memory (/sys/devices/system/node/has_memory under `sysroot`), empty where
// the file cannot be read.
std::vector<int> host_numa_nodes(const std::string& sysroot);

}  // namespace cumemctl::gpu
