// `cumemctl bandwidth`: each path memory moves on, measured on the copy engines and held against the
// physical limit the GPU reports: host<->device from pinned memory (each way, both at once), from
// pageable memory (asked for), from host memory on each NUMA node, device->device (HBM), and GPU->GPU.
#include <cstdlib>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bandwidth_results.hpp"
#include "command.hpp"
#include "commands.hpp"
#include "gpu/bandwidth/copy_bandwidth.hpp"
#include "gpu/bandwidth/host_placement.hpp"
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

// The figure as nvbandwidth counts it: bytes copied a second, per direction ("51.8 + 50.7" for both).
std::string copied_text(const CopyFigure& f) {
    std::vector<std::string> parts;
    for (const CopiedFigure& c : f.copied) parts.push_back(gbps_text(c.gbps()));
    return parts.empty() ? "-" : fmt::format("{}", fmt::join(parts, " + "));
}

// Where a GPU's pinned and pageable buffers were: "GPU 4 host buffers: NUMA node 1 (NVML), the
// thread bound to CPUs 1".
std::string placement_note(const DeviceFigures& d) {
    if (!d.placement.node)
        return fmt::format("GPU {} host buffers: wherever the thread ran ({})", d.id.ordinal, d.placement.why_not);
    if (!d.binding.node)
        return fmt::format("GPU {} host buffers: not placed on its NUMA node {} ({})", d.id.ordinal, *d.placement.node,
                           d.binding.error);
    return fmt::format(
        "GPU {} host buffers: NUMA node {} ({}){}", d.id.ordinal, *d.placement.node, d.placement.source,
        d.placement.cpus.empty() ? "" : fmt::format(", the thread bound to CPUs {}", fmt::join(d.placement.cpus, ",")));
}

Table figures_table(const std::vector<DeviceFigures>& done, const CopyRequest& request) {
    Table t;
    t.title = "Bandwidth";
    t.columns = {"GPU", "path", "memory", "node", "GB/s", "limit", "of limit", "copied GB/s"};
    for (const DeviceFigures& d : done) {
        for (const CopyFigure& f : d.figures) {
            if (f.concurrent) continue;  // in the table of every GPU at once
            const auto limit = limit_of(d.limits, f);
            t.rows.push_back({std::to_string(d.id.ordinal), path_name(f.path), memory_name(f),
                              f.numa_node ? std::to_string(*f.numa_node) : "-", gbps_text(f.gbps()),
                              limit ? gbps_text(*limit) : "-",
                              limit ? fmt::format("{:.0f}%", 100 * f.gbps() / *limit) : "-", copied_text(f)});
        }
    }
    t.notes.push_back(
        fmt::format("{} copies of {} each, timed with events after one untimed; GB/s is 1e9 bytes a "
                    "second; both counts the two directions summed, d2d the bytes read plus written (the JSON's "
                    "count says so of each figure; its copied gives bytes copied per direction, as nvbandwidth "
                    "counts)",
                    request.iterations, format_size(request.size)));
    for (const DeviceFigures& d : done) {
        t.notes.push_back(
            fmt::format("GPU {} limits: host {}; memory {}{}", d.id.ordinal,
                        d.limits.host ? d.limits.host->basis : "unknown (" + d.limits.host_why + ")",
                        d.limits.memory ? d.limits.memory->basis : "unknown (" + d.limits.memory_why + ")",
                        d.limits.peer ? "; GPU->GPU " + d.limits.peer->basis : ""));
        t.notes.push_back(placement_note(d));
    }
    t.wrap_last = true;
    return t;
}

void add_metrics(Report& report, const DeviceFigures& d) {
    for (const CopyFigure& f : d.figures) {
        MetricLabels labels = gpu_labels(d.id, report.host);
        if (f.concurrent) {
            labels.emplace_back("path", path_name(f.path));
            report.add_metric("bandwidth_concurrent_gbps",
                              "a GPU's host copies while every selected GPU copies the same way (--concurrent), "
                              "GB/s, bytes copied",
                              labels, f.gbps());
            continue;
        }
        labels.emplace_back("path", path_name(f.path));
        labels.emplace_back("memory", memory_name(f));
        labels.emplace_back("count", count_name(byte_count(f.path)));
        report.add_metric("bandwidth_gbps",
                          "a copy path's measured bandwidth, GB/s (1e9 bytes a second), its bytes counted as the "
                          "count label says: copied (h2d, d2h, peer), both_directions summed (both), or "
                          "read_and_written (d2d, each byte twice)",
                          labels, f.gbps());
        if (const auto limit = limit_of(d.limits, f)) {
            report.add_metric("bandwidth_limit_gbps", "the physical limit of a copy path, GB/s, counted as its figure",
                              labels, *limit);
            report.add_metric("bandwidth_ratio", "a copy path's bandwidth as a fraction of its limit", labels,
                              f.gbps() / *limit);
        }
        for (const CopiedFigure& c : f.copied) {
            MetricLabels direction = labels;
            direction.emplace_back("direction", path_name(c.direction));
            report.add_metric("bandwidth_copied_gbps",
                              "a copy path's bytes copied a second in one direction, GB/s, as nvbandwidth counts "
                              "(both: each direction while the other runs; d2d: half the bytes read plus written)",
                              direction, c.gbps());
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

// What a run that SIGINT or SIGTERM stopped had done: the figures above, and where it stopped.
std::string stopped_note(const Interrupted& stop, int device, const std::string& doing, std::size_t figures) {
    return fmt::format("{} while measuring GPU {} ({}); the {} figure{} above {} measured before", stop.what(), device,
                       doing, figures, figures == 1 ? "" : "s", figures == 1 ? "was" : "were");
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

// --concurrent's table: each GPU's figure at once beside its own alone, and the sums.
Table concurrent_table(const std::vector<DeviceFigures>& done, const std::vector<ConcurrentSum>& sums) {
    Table t;
    t.title = "Bandwidth, every GPU at once";
    t.columns = {"GPU", "path", "node", "GB/s", "alone", "of alone"};
    for (const DeviceFigures& d : done) {
        for (const CopyFigure& f : d.figures) {
            if (!f.concurrent) continue;
            double alone = 0;
            for (const CopyFigure& a : d.figures) {
                if (!a.concurrent && a.path == f.path && a.host == HostMemory::pinned) alone = a.gbps();
            }
            t.rows.push_back({std::to_string(d.id.ordinal), path_name(f.path),
                              f.numa_node ? std::to_string(*f.numa_node) : "-", gbps_text(f.gbps()),
                              alone > 0 ? gbps_text(alone) : "-",
                              alone > 0 ? fmt::format("{:.0f}%", 100 * f.gbps() / alone) : "-"});
        }
    }
    for (const ConcurrentSum& s : sums) {
        t.rows.push_back({"all", path_name(s.path), "-", gbps_text(s.gbps), "-", "-"});
    }
    t.notes.push_back(
        "each GPU's copies timed on its own stream while every other GPU copies the same way; all sums them, "
        "as nvbandwidth's host_to_all and all_to_host do; a GPU well below its figure alone shares a link "
        "(a PCIe switch's uplink, the socket's memory)");
    return t;
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
            const int stopped_on = stopped && !done.empty() ? done.back().id.ordinal : -1;
            // A GPU that failed is left out; one that a stop cut short keeps the figures it measured.
            if (done.size() > finished && (!stopped || done.back().figures.empty())) done.pop_back();
            std::size_t figures = 0;
            for (const DeviceFigures& d : done) figures += d.figures.size();
            for (const DeviceFigures& d : done) report_device(report, d);
            for (const ConcurrentSum& c : sums) {
                report.add_metric("bandwidth_concurrent_sum_gbps",
                                  "every selected GPU's host copies at once, summed (--concurrent), GB/s, bytes copied",
                                  {{"path", path_name(c.path)}}, c.gbps);
            }
            BandwidthResults results;
            results.size = plan.request.size;
            results.iterations = plan.request.iterations;
            results.devices = done;
            results.sums = sums;
            report.set_results(std::move(results));
            if (count == 0) {
                report.tables.push_back(Table{"Bandwidth", {}, {}, {"no CUDA device is visible on this node"}});
                return;
            }
            if (!done.empty()) report.tables.push_back(figures_table(done, plan.request));
            if (!sums.empty()) report.tables.push_back(concurrent_table(done, sums));
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
    app->add_flag("--concurrent", opts->concurrent,
                  "also copy h2d, then d2h, on every selected GPU at once: each GPU's figure and their sum");
    app->callback([opts, &globals, &runner] { runner = [opts, &globals] { return run_bandwidth(*opts, globals); }; });
}

}  // namespace cumemctl::cmd
