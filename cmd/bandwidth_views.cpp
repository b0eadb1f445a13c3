// bandwidth's views (BandwidthResults): the table of each path's figure against its limit, --concurrent's
// table, each GPU's names and limits below them, and the Prometheus gauges of every figure.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bandwidth_results.hpp"
#include "gpu_identity.hpp"
#include "gpu_labels.hpp"
#include "report/report.hpp"
#include "util/size.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

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

Table figures_table(const BandwidthResults& request) {
    const std::vector<DeviceFigures>& done = request.devices;
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

void add_metrics(Metrics& out, const DeviceFigures& d, const std::string& host) {
    for (const CopyFigure& f : d.figures) {
        MetricLabels labels = gpu_labels(d.id, host);
        if (f.concurrent) {
            labels.emplace_back("path", path_name(f.path));
            out.add("bandwidth_concurrent_gbps",
                    "a GPU's host copies while every selected GPU copies the same way (--concurrent), "
                    "GB/s, bytes copied",
                    labels, f.gbps());
            continue;
        }
        labels.emplace_back("path", path_name(f.path));
        labels.emplace_back("memory", memory_name(f));
        labels.emplace_back("count", count_name(byte_count(f.path)));
        out.add("bandwidth_gbps",
                "a copy path's measured bandwidth, GB/s (1e9 bytes a second), its bytes counted as the "
                "count label says: copied (h2d, d2h, peer), both_directions summed (both), or "
                "read_and_written (d2d, each byte twice)",
                labels, f.gbps());
        if (const auto limit = limit_of(d.limits, f)) {
            out.add("bandwidth_limit_gbps", "the physical limit of a copy path, GB/s, counted as its figure", labels,
                    *limit);
            out.add("bandwidth_ratio", "a copy path's bandwidth as a fraction of its limit", labels, f.gbps() / *limit);
        }
        for (const CopiedFigure& c : f.copied) {
            MetricLabels direction = labels;
            direction.emplace_back("direction", path_name(c.direction));
            out.add("bandwidth_copied_gbps",
                    "a copy path's bytes copied a second in one direction, GB/s, as nvbandwidth counts "
                    "(both: each direction while the other runs; d2d: half the bytes read plus written)",
                    direction, c.gbps());
        }
    }
}

// What a run that SIGINT or SIGTERM stopped had done: the figures above, and where it stopped.
// `device` is -1 where no one GPU was being measured (every GPU at once).
std::string stopped_note(const Interrupted& stop, int device, const std::string& doing, std::size_t figures) {
    const std::string where = device < 0 ? doing : fmt::format("GPU {} ({})", device, doing);
    return fmt::format("{} while measuring {}; the {} figure{} above {} measured before", stop.what(), where, figures,
                       figures == 1 ? "" : "s", figures == 1 ? "was" : "were");
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

}  // namespace

std::vector<Table> BandwidthResults::tables(const Report& /*report*/) const {
    if (device_count == 0) return {Table{"Bandwidth", {}, {}, {"no CUDA device is visible on this node"}}};
    std::vector<Table> tables;
    if (!devices.empty()) tables.push_back(figures_table(*this));
    if (!sums.empty()) tables.push_back(concurrent_table(devices, sums));
    if (!tables.empty()) add_identity_notes(tables.back(), identities);
    if (stopped && !devices.empty()) {
        std::size_t figures = 0;
        for (const DeviceFigures& d : devices) figures += d.figures.size();
        tables.back().notes.push_back(stopped_note(stopped->signal, stopped->device, stopped->doing, figures));
    }
    return tables;
}

std::vector<Metric> BandwidthResults::metrics(const Report& report) const {
    Metrics out;
    for (const DeviceFigures& d : devices) add_metrics(out, d, report.host);
    for (const ConcurrentSum& c : sums) {
        out.add("bandwidth_concurrent_sum_gbps",
                "every selected GPU's host copies at once, summed (--concurrent), GB/s, bytes copied",
                {{"path", path_name(c.path)}}, c.gbps);
    }
    return out.samples;
}

}  // namespace cumemctl::cmd
