// `cumemctl bandwidth`: each path memory moves on, measured on the copy engines and held against the
// physical limit the GPU reports: host<->device from pinned memory (each way, both at once), from
// pageable memory (asked for), from host memory on each NUMA node, device->device (HBM), and GPU->GPU.
#include <optional>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bandwidth_results.hpp"
#include "command.hpp"
#include "gpu/bandwidth/copy_bandwidth.hpp"
#include "gpu/bandwidth/host_placement.hpp"
#include "gpu/bandwidth/limits.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/device/primary_context.hpp"
#include "gpu_identity.hpp"
#include "held_errors.hpp"
#include "util/index_list.hpp"
#include "util/size.hpp"
#include "util/system_root.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

constexpr const char* kDefaultSize = "256MiB";
constexpr int kDefaultIterations = 10;
constexpr int kMostIterations = 10000;

// The options checked, before the driver is loaded.
struct BandwidthPlan {
    DeviceList devices;
    CopyRequest request;
    std::optional<std::vector<int>> numa;  // --numa: these nodes; absent: the GPU's own and one other
    bool numa_all = false;
    bool peers = true;
    bool concurrent = false;  // also every GPU at once, h2d then d2h
    std::string sysroot;      // CUMEMCTL_SYSROOT: where /sys is read (tests)
};

// The options as typed.
struct BandwidthOptions {
    std::string devices;
    std::string size = kDefaultSize;
    int iterations = kDefaultIterations;
    bool pageable = false;
    std::string numa;  // "", "none", "all" or a list
    bool no_peers = false;
    bool concurrent = false;

    BandwidthPlan check() const {
        BandwidthPlan plan;
        plan.devices = parse_device_list(devices);
        plan.request.size = parse_size(size);
        if (plan.request.size == 0 || plan.request.size > (64ULL << 30)) {
            throw Error(ExitCode::usage, fmt::format("invalid --size '{}': a copy of 1 byte to 64 GiB", size),
                        fmt::format("the default, {}, takes well under a second a GPU", kDefaultSize));
        }
        if (iterations < 1 || iterations > kMostIterations) {
            throw Error(ExitCode::usage,
                        fmt::format("invalid --iterations {}: 1 to {} timed copies", iterations, kMostIterations),
                        fmt::format("the default is {}", kDefaultIterations));
        }
        plan.request.iterations = iterations;
        plan.request.pageable = pageable;
        if (numa == "none") {
            plan.numa = std::vector<int>{};
        } else if (numa == "all") {
            plan.numa_all = true;
        } else if (!numa.empty()) {
            plan.numa = parse_index_list(numa, 4096, "NUMA node", false);
        }
        plan.peers = !no_peers;
        plan.concurrent = concurrent;
        plan.sysroot = system_root("NUMA nodes and CPU lists");
        return plan;
    }
};

// The host NUMA nodes to measure from for a GPU whose own node is `own` (-1: none): --numa's, else
// the own node and the first other node with memory (the other socket of a two-socket host).
std::vector<int> numa_nodes_for(const BandwidthPlan& plan, int own, const std::vector<int>& host_nodes) {
    if (plan.numa) return *plan.numa;
    if (plan.numa_all) return !host_nodes.empty() ? host_nodes : own >= 0 ? std::vector<int>{own} : std::vector<int>{};
    if (own < 0) return {};
    std::vector<int> nodes{own};
    for (const int n : host_nodes) {
        if (n != own) {
            nodes.push_back(n);
            break;
        }
    }
    return nodes;
}

// The GPUs among `selected` that `device` can reach as a peer.
std::vector<int> peers_of(const DriverApi& api, int device, const std::vector<int>& selected) {
    std::vector<int> peers;
    if (api.cuDeviceCanAccessPeer == nullptr) return peers;
    for (const int other : selected) {
        int can = 0;
        if (other != device && api.cuDeviceCanAccessPeer(&can, device, other) == CUDA_SUCCESS && can != 0)
            peers.push_back(other);
    }
    return peers;
}

// A warning for each host NUMA node a GPU could not copy from.
void report_device(Report& report, const DeviceFigures& d) {
    if (d.numa_unsupported) {
        report.add_warning(fmt::format("GPU {}: no copies from host NUMA nodes: the GPU cannot map "
                                       "host-NUMA memory (CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_"
                                       "MANAGEMENT_SUPPORTED is 0)",
                                       d.id.ordinal),
                           "a driver of CUDA 12.2 or newer and a GPU that supports it map host-NUMA memory",
                           d.id.ordinal);
    }
    if (d.placement.node && !d.binding.error.empty()) {
        report.add_warning(fmt::format("GPU {}: {} host buffers on NUMA node {} ({}): {}", d.id.ordinal,
                                       d.binding.node ? "only partly placed" : "could not place", *d.placement.node,
                                       d.placement.source, d.binding.error),
                           "run as a user whose CPU set (taskset, the cgroup's cpuset) includes the GPU's node; "
                           "numactl -H lists the nodes",
                           d.id.ordinal);
    }
    for (const NumaRefusal& r : d.numa_refused) {
        report.add_warning(
            fmt::format("GPU {}: no copies from host NUMA node {}: {}", d.id.ordinal, r.node, r.problem.message),
            "give --numa the nodes with memory near the GPU (numactl -H lists them)", d.id.ordinal);
    }
}

// Measures one GPU into `d`, which keeps the figures measured when SIGINT or SIGTERM stops it
// (Interrupted); `doing` says what is being measured.
void measure_device(const DriverApi& api, const nvml::Library& nvml, const BandwidthPlan& plan,
                    const DeviceIdentity& id, const std::vector<int>& selected, DeviceFigures& d, std::string& doing) {
    d.id = id;
    doing = "reading its limits";
    d.limits = device_limits(api, id.ordinal, &nvml, id.uuid);
    CopyRequest request = plan.request;
    const int own = device_attribute(api, id.ordinal, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID).value_or(-1);
    const bool numa_vmm =
        device_attribute(api, id.ordinal, CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)
            .value_or(0) != 0;
    if (numa_vmm) {
        request.numa_nodes = numa_nodes_for(plan, own, host_numa_nodes(plan.sysroot));
    } else {
        d.numa_unsupported = plan.numa_all || (plan.numa && !plan.numa->empty());
    }
    if (plan.peers) request.peers = peers_of(api, id.ordinal, selected);
    d.placement = host_placement(api, id.ordinal, &nvml, id.uuid, plan.sysroot);
    request.placement = d.placement;
    const PrimaryContext context(api, id.ordinal);
    doing = "making its buffers";
    measure_copies(
        api, id.ordinal, request, d.figures,
        [&id, &doing](const std::string& what) {
            doing = what;
            progress_say(fmt::format("GPU {}: {}", id.ordinal, what));
        },
        &d.numa_refused, &d.binding);
}

// --concurrent: every GPU's h2d, then d2h, at once (each bound to its own node), the figures added to
// each GPU's, and each direction's sum.
std::vector<ConcurrentSum> measure_all_at_once(const DriverApi& api, const BandwidthPlan& plan,
                                               const std::vector<int>& selected, std::vector<DeviceFigures>& done) {
    std::vector<std::optional<HostPlacement>> placements;
    for (const DeviceFigures& d : done) placements.emplace_back(d.placement);
    CopyRequest request = plan.request;
    const auto figures = measure_concurrent(api, selected, request, placements);
    std::vector<ConcurrentSum> sums{{CopyPath::host_to_device, selected, 0}, {CopyPath::device_to_host, selected, 0}};
    for (std::size_t i = 0; i < figures.size() && i < done.size(); ++i) {
        for (const CopyFigure& f : figures[i]) {
            done[i].figures.push_back(f);
            sums[f.path == CopyPath::host_to_device ? 0 : 1].gbps += f.gbps();
        }
    }
    return sums;
}

Report run_bandwidth(const BandwidthOptions& opts, const Globals& globals) {
    const NvmlLoad nvml_load = load_nvml_for_identities(globals);
    return run_command(
        "bandwidth", globals, opts, [&](Report& report, Driver& driver, int count, const BandwidthPlan& plan) {
            const DriverApi& api = driver.api();
            const nvml::Library& nvml = nvml_load.get();
            const auto selected = plan.devices.select(api, count, &nvml);
            const std::vector<DeviceIdentity> ids = identities_of(report, globals, api, nvml_load, selected);
            std::vector<DeviceFigures> done;
            std::string doing;
            std::vector<ConcurrentSum> sums;
            std::optional<Interrupted> stopped;
            std::size_t finished = 0;
            try {
                judging_holds(report, api, nvml, selected, [&] {
                    for (const int ordinal : selected) {
                        measure_device(api, nvml, plan, identity_in(ids, ordinal), selected, done.emplace_back(),
                                       doing);
                        ++finished;
                    }
                    if (plan.concurrent && !selected.empty()) {
                        doing = "every GPU at once";
                        progress_say(doing);
                        sums = measure_all_at_once(api, plan, selected, done);
                    }
                });
            } catch (const Interrupted& stop) {
                stopped = stop;
            }
            // Past the last GPU alone, the stop came while every GPU copied at once: no one GPU's.
            const int stopped_on = stopped && !done.empty() && finished < selected.size() ? done.back().id.ordinal : -1;
            // A GPU that failed is left out; one that a stop cut short keeps the figures it measured.
            if (done.size() > finished && (!stopped || done.back().figures.empty())) done.pop_back();
            for (const DeviceFigures& d : done) report_device(report, d);
            BandwidthResults results;
            results.size = plan.request.size;
            results.iterations = plan.request.iterations;
            results.devices = done;
            results.sums = sums;
            results.device_count = count;
            results.identities = ids;
            if (stopped) results.stopped = BandwidthResults::Stop{*stopped, stopped_on, doing};
            report.set_results(std::move(results));
            if (count > 0 && stopped) {
                report.add_error(interrupted_problem(*stopped));
                report.exit_code = stopped->exit_code();
            }
        });
}

}  // namespace

void register_bandwidth(CLI::App& root, const Globals& globals, Runner& runner) {
    auto opts = std::make_shared<BandwidthOptions>();
    CLI::App* app = root.add_subcommand(
        "bandwidth", "each memory path's bandwidth (host<->device, HBM, GPU<->GPU) against its physical limit");
    add_device_option(*app, opts->devices);
    app->add_option("--size", opts->size, "the bytes of each copy (4096, 64MiB, 1GiB)")->capture_default_str();
    app->add_option("--iterations", opts->iterations, "timed copies of each path, after one untimed")
        ->capture_default_str();
    app->add_flag("--pageable", opts->pageable, "also copy from and to pageable (malloc) host memory");
    app->add_option("--numa", opts->numa,
                    "host NUMA nodes to copy from and to (cuMemCreate memory): a list, all, or none; default the "
                    "GPU's own node and one other")
        ->type_name("NODES");
    app->add_flag("--no-peers", opts->no_peers, "leave out GPU->GPU copies");
    app->add_flag("--concurrent", opts->concurrent,
                  "also copy h2d, then d2h, on every selected GPU at once: each GPU's figure and their sum");
    app->callback([opts, &globals, &runner] { runner = [opts, &globals] { return run_bandwidth(*opts, globals); }; });
}

}  // namespace cumemctl::cmd
