// devices' Prometheus view (DevicesResults::metrics): each GPU's identity, memory and capabilities,
// labelled as dcgm-exporter labels its series.
#include <algorithm>

#include <fmt/format.h>

#include "devices_fabric.hpp"
#include "devices_locality.hpp"
#include "devices_results.hpp"
#include "gpu_labels.hpp"
#include "report/report.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

// The gauges of what NVML knows of a device's memory, labelled as dcgm-exporter labels its series.
void add_nvml_metrics(Metrics& out, const DeviceInfo& d, const MetricLabels& labels) {
    const nvml::MemoryHealth& h = *d.nvml;
    auto gauge = [&](const char* name, const char* help, const auto& value) {
        if (value) out.add(name, help, labels, static_cast<double>(*value));
    };
    auto with = [&](const char* key, const char* value) {
        MetricLabels l = labels;
        l.emplace_back(key, value);
        return l;
    };
    gauge("device_memory_used_bytes", "a device's used memory as NVML reports it, bytes", h.used);
    gauge("device_memory_reserved_bytes", "a device's memory reserved by the driver and firmware, bytes", h.reserved);
    gauge("device_bar1_total_bytes", "a device's BAR1 aperture, bytes", h.bar1_total);
    gauge("device_ecc_uncorrected_volatile_errors", "uncorrectable ECC errors since the last GPU reset",
          h.ecc_uncorrected_volatile);
    if (h.remapped_rows) {
        const auto& r = *h.remapped_rows;
        out.add("device_remapped_rows", "rows remapped, by the kind of error that caused it",
                with("kind", "correctable"), r.corrected);
        out.add("device_remapped_rows", "rows remapped, by the kind of error that caused it",
                with("kind", "uncorrectable"), r.uncorrected);
        out.add("device_remap_pending", "a row remap waits for the next GPU reset (1) or not (0)", labels,
                r.pending ? 1 : 0);
        out.add("device_remap_failure", "a row remap could not be made (1) or not (0)", labels, r.failure ? 1 : 0);
    }
}

// The Prometheus gauges of `devices`: count, identity, memory and every known capability, each GPU's
// labelled as dcgm-exporter labels its series (gpu_labels).
void add_device_metrics(Metrics& out, const std::string& host, const std::vector<DeviceInfo>& devices, int count) {
    out.add("devices", "CUDA devices the driver sees", {}, count);
    for (const auto& d : devices) {
        const MetricLabels labels = gpu_labels(identity_of(d), host);
        auto with = [&](const char* key, std::string value) {
            MetricLabels l = labels;
            l.emplace_back(key, std::move(value));
            return l;
        };
        out.add("device_info", "a device's identity (always 1)",
                with("compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)), 1);
        out.add("device_memory_total_bytes", "a device's memory, bytes", labels, static_cast<double>(d.total_bytes));
        if (d.free_bytes) {
            out.add("device_memory_free_bytes",
                    "a device's free memory, bytes (source nvml: device-wide; context: cuMemGetInfo in "
                    "cumemctl's own context)",
                    with("source", d.free_source), static_cast<double>(*d.free_bytes));
        }
        if (d.nvml) add_nvml_metrics(out, d, labels);
        add_fabric_metrics(out, d, labels);
        add_locality_metrics(out, d, labels);
        for (const auto& cap : d.capabilities) {
            if (!cap.value) continue;  // unknown to this driver: no sample
            if (cap.key == "host_numa_id") {
                out.add("device_host_numa_id", "the host NUMA node closest to a device (-1: none)", labels, *cap.value);
            } else if (cap.key == "pool_handle_types") {
                for (const char* type : {"posix-fd", "fabric"}) {
                    const auto names = handle_type_names(*cap.value);
                    const bool has = std::find(names.begin(), names.end(), type) != names.end();
                    out.add("device_pool_handle_type", "whether memory pools can export this IPC handle type",
                            with("type", type), has ? 1 : 0);
                }
            } else {
                out.add("device_capability",
                        "a memory capability of a device (1 yes, 0 no; absent when the driver does not know it)",
                        with("capability", std::string(cap.key)), *cap.value != 0 ? 1 : 0);
            }
        }
    }
}

}  // namespace

std::vector<Metric> DevicesResults::metrics(const Report& report) const {
    Metrics out;
    add_device_metrics(out, report.host, devices, device_count);
    add_driver_info(out, report, nvml ? nvml->driver_version : std::string());
    return out.samples;
}

}  // namespace cumemctl::cmd
