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

namespace cumemctl::gpu {

// The paths, in the order they are measured and reported.
enum class CopyPath { host_to_device, device_to_host, both, device_to_device, peer };

// Where the host side of a copy lives.
enum class HostMemory { pinned, pageable, numa };

// "h2d", "d2h", "both", "d2d", "peer": the names --json and Prometheus use.
const char* path_name(CopyPath path);

// One figure: a path, its host memory (host paths), the NUMA node (numa) or peer device (peer), the
// bytes that crossed the path and the seconds the events measured.
struct CopyFigure {
    CopyPath path = CopyPath::host_to_device;
    HostMemory host = HostMemory::pinned;
    std::optional<int> numa_node;  // numa: where the host memory is
    std::optional<int> peer;       // peer: the other GPU
    std::uint64_t bytes = 0;       // counted: both directions for both, read plus written for d2d
    int iterations = 0;
    double seconds = 0;

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
void measure_copies(const DriverApi& api, int device, const CopyRequest& request, std::vector<CopyFigure>& out,
                    const CopyProgress& progress = {}, std::vector<NumaRefusal>* refused = nullptr);

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
