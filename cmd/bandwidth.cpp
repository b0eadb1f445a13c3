// `cumemctl bandwidth`: each path memory moves on, measured on the copy engines and held against the
// physical limit the GPU reports: host<->device from pinned memory (each way, both at once), from
// pageable memory (asked for), from host memory on each NUMA node, device->device (HBM), and GPU->GPU.
#include <cstdlib>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "bandwidth_results.hpp"
#include "command.hpp"
#include "commands.hpp"
#include "gpu/bandwidth/copy_bandwidth.hpp"
#include "gpu/bandwidth/limits.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/device/primary_context.hpp"
#include "gpu_identity.hpp"
#include "gpu_labels.hpp"
#include "held_errors.hpp"
#include "util/index_list.hpp"
#include "util/size.hpp"

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
    std::string sysroot;  // CUMEMCTL_SYSROOT: where /sys is read (tests)
};

// The options as typed.
struct BandwidthOptions {
    std::string devices;
    std::string size = kDefaultSize;
    int iterations = kDefaultIterations;
    bool pageable = false;
    std::string numa;  // "", "none", "all" or a list
    bool no_peers = false;

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
        if (const char* root = std::getenv("CUMEMCTL_SYSROOT"); root != nullptr) plan.sysroot = root;
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

std::string gbps_text(double gbps) {
    return gbps >= 1000 ? fmt::format("{:.0f}", gbps) : fmt::format("{:.1f}", gbps);
}

Table figures_table(const std::vector<DeviceFigures>& done, const CopyRequest& request) {
    Table t;
    t.title = "Bandwidth";
    t.columns = {"GPU", "path", "memory", "GB/s", "limit", "of limit"};
    for (const DeviceFigures& d : done) {
        for (const CopyFigure& f : d.figures) {
            const auto limit = limit_of(d.limits, f);
            t.rows.push_back({std::to_string(d.id.ordinal), path_name(f.path), memory_name(f), gbps_text(f.gbps()),
                              limit ? gbps_text(*limit) : "-",
                              limit ? fmt::format("{:.0f}%", 100 * f.gbps() / *limit) : "-"});
        }
    }
    t.notes.push_back(
        fmt::format("{} copies of {} each, timed with events after one untimed; GB/s is 1e9 bytes a "
                    "second; both counts the two directions, d2d the bytes read plus written",
                    request.iterations, format_size(request.size)));
    for (const DeviceFigures& d : done) {
        t.notes.push_back(
            fmt::format("GPU {} limits: host {}; memory {}", d.id.ordinal,
                        d.limits.host ? d.limits.host->basis : "unknown (" + d.limits.host_why + ")",
                        d.limits.memory ? d.limits.memory->basis : "unknown (" + d.limits.memory_why + ")"));
    }
    t.wrap_last = true;
    return t;
}

void add_metrics(Report& report, const DeviceFigures& d) {
    for (const CopyFigure& f : d.figures) {
        MetricLabels labels = gpu_labels(d.id, report.host);
        labels.emplace_back("path", path_name(f.path));
        labels.emplace_back("memory", memory_name(f));
        report.add_metric("bandwidth_gbps", "a copy path's measured bandwidth, GB/s (1e9 bytes a second)", labels,
                          f.gbps());
        if (const auto limit = limit_of(d.limits, f)) {
            report.add_metric("bandwidth_limit_gbps", "the physical limit of a copy path, GB/s", labels, *limit);
            report.add_metric("bandwidth_ratio", "a copy path's bandwidth as a fraction of its limit", labels,
                              f.gbps() / *limit);
        }
    }
}

// A GPU's gauges, and a warning for each host NUMA node it could not copy from.
void report_device(Report& report, const DeviceFigures& d) {
    add_metrics(report, d);
    if (d.numa_unsupported) {
        report.add_warning(fmt::format("GPU {}: no copies from host NUMA nodes: the GPU cannot map "
                                       "host-NUMA memory (CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_"
                                       "MANAGEMENT_SUPPORTED is 0)",
                                       d.id.ordinal),
                           "a driver of CUDA 12.2 or newer and a GPU that supports it map host-NUMA memory",
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
    const PrimaryContext context(api, id.ordinal);
    doing = "making its buffers";
    measure_copies(
        api, id.ordinal, request, d.figures,
        [&id, &doing](const std::string& what) {
            doing = what;
            progress_say(fmt::format("GPU {}: {}", id.ordinal, what));
        },
        &d.numa_refused);
}

// What a run that SIGINT or SIGTERM stopped had done: the figures above, and where it stopped.
std::string stopped_note(const Interrupted& stop, int device, const std::string& doing, std::size_t figures) {
    return fmt::format("{} while measuring GPU {} ({}); the {} figure{} above {} measured before", stop.what(), device,
                       doing, figures, figures == 1 ? "" : "s", figures == 1 ? "was" : "were");
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
            std::optional<Interrupted> stopped;
            std::size_t finished = 0;
            try {
                judging_holds(report, api, nvml, selected, [&] {
                    for (const int ordinal : selected) {
                        measure_device(api, nvml, plan, identity_in(ids, ordinal), selected, done.emplace_back(),
                                       doing);
                        ++finished;
                    }
                });
            } catch (const Interrupted& stop) {
                stopped = stop;
            }
            const int stopped_on = stopped && !done.empty() ? done.back().id.ordinal : -1;
            // A GPU that failed is left out; one that a stop cut short keeps the figures it measured.
            if (done.size() > finished && (!stopped || done.back().figures.empty())) done.pop_back();
            std::size_t figures = 0;
            for (const DeviceFigures& d : done) figures += d.figures.size();
            for (const DeviceFigures& d : done) report_device(report, d);
            BandwidthResults results;
            results.size = plan.request.size;
            results.iterations = plan.request.iterations;
            results.devices = done;
            report.set_results(std::move(results));
            if (count == 0) {
                report.tables.push_back(Table{"Bandwidth", {}, {}, {"no CUDA device is visible on this node"}});
                return;
            }
            if (!done.empty()) report.tables.push_back(figures_table(done, plan.request));
            if (!report.tables.empty()) add_identity_notes(report.tables.back(), ids);
            if (stopped) {
                if (!done.empty())
                    report.tables.back().notes.push_back(stopped_note(*stopped, stopped_on, doing, figures));
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
    app->callback([opts, &globals, &runner] { runner = [opts, &globals] { return run_bandwidth(*opts, globals); }; });
}

}  // namespace cumemctl::cmd
