// `cumemctl devices`: what each device's memory system supports.
#include <algorithm>

#include <fmt/format.h>

#include "command.hpp"
#include "commands.hpp"
#include "devices_fabric.hpp"
#include "devices_locality.hpp"
#include "devices_results.hpp"
#include "devices_table.hpp"
#include "gpu_identity.hpp"
#include "gpu_labels.hpp"
#include "gpu/device/devices.hpp"
#include "util/phase_timing.hpp"
#include "util/size.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

// The options, checked before the driver is loaded.
struct DevicesPlan {
    DeviceList devices;
    bool no_free = false;
};

// The options as typed.
struct DevicesOptions {
    std::string devices;
    bool no_free = false;

    DevicesPlan check() const { return {parse_device_list(devices), no_free}; }
};

// The gauges of what NVML knows of a device's memory, labelled as dcgm-exporter labels its series.
void add_nvml_metrics(Report& report, const DeviceInfo& d, const MetricLabels& labels) {
    const nvml::MemoryHealth& h = *d.nvml;
    auto gauge = [&](const char* name, const char* help, const auto& value) {
        if (value) report.add_metric(name, help, labels, static_cast<double>(*value));
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
        report.add_metric("device_remapped_rows", "rows remapped, by the kind of error that caused it",
                          with("kind", "correctable"), r.corrected);
        report.add_metric("device_remapped_rows", "rows remapped, by the kind of error that caused it",
                          with("kind", "uncorrectable"), r.uncorrected);
        report.add_metric("device_remap_pending", "a row remap waits for the next GPU reset (1) or not (0)", labels,
                          r.pending ? 1 : 0);
        report.add_metric("device_remap_failure", "a row remap could not be made (1) or not (0)", labels,
                          r.failure ? 1 : 0);
    }
}

// The Prometheus gauges of `devices`: count, identity, memory and every known capability, each GPU's
// labelled as dcgm-exporter labels its series (gpu_labels).
void add_device_metrics(Report& report, const std::vector<DeviceInfo>& devices, int count) {
    report.add_metric("devices", "CUDA devices the driver sees", {}, count);
    for (const auto& d : devices) {
        const MetricLabels labels = gpu_labels(identity_of(d), report.host);
        auto with = [&](const char* key, std::string value) {
            MetricLabels l = labels;
            l.emplace_back(key, std::move(value));
            return l;
        };
        report.add_metric("device_info", "a device's identity (always 1)",
                          with("compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)), 1);
        report.add_metric("device_memory_total_bytes", "a device's memory, bytes", labels,
                          static_cast<double>(d.total_bytes));
        if (d.free_bytes) {
            report.add_metric("device_memory_free_bytes",
                              "a device's free memory, bytes (source nvml: device-wide; context: cuMemGetInfo in "
                              "cumemctl's own context)",
                              with("source", d.free_source), static_cast<double>(*d.free_bytes));
        }
        if (d.nvml) add_nvml_metrics(report, d, labels);
        add_fabric_metrics(report, d, labels);
        add_locality_metrics(report, d, labels);
        for (const auto& cap : d.capabilities) {
            if (!cap.value) continue;  // unknown to this driver: no sample
            if (cap.key == "host_numa_id") {
                report.add_metric("device_host_numa_id", "the host NUMA node closest to a device (-1: none)", labels,
                                  *cap.value);
            } else if (cap.key == "pool_handle_types") {
                for (const char* type : {"posix-fd", "fabric"}) {
                    const auto names = handle_type_names(*cap.value);
                    const bool has = std::find(names.begin(), names.end(), type) != names.end();
                    report.add_metric("device_pool_handle_type", "whether memory pools can export this IPC handle type",
                                      with("type", type), has ? 1 : 0);
                }
            } else {
                report.add_metric(
                    "device_capability",
                    "a memory capability of a device (1 yes, 0 no; absent when the driver does not know it)",
                    with("capability", std::string(cap.key)), *cap.value != 0 ? 1 : 0);
            }
        }
    }
}

Report run_devices(const DevicesOptions& opts, const Globals& globals) {
    // NVML loads on its own thread while the driver loads and initialises (it needs no context).
    NvmlLoad nvml_load;
    if (!opts.no_free) nvml_load = load_nvml_for_identities(globals);
    return run_command(
        "devices", globals, opts, [&](Report& report, Driver& driver, int count, const DevicesPlan& plan) {
            const nvml::Library* nvml = plan.no_free ? nullptr : &nvml_load.get();
            const auto selected = plan.devices.select(driver.api(), count, nvml);
            std::vector<DeviceInfo> devices;
            for (int ordinal : selected) devices.push_back(query_device(driver.api(), ordinal));
            mark_phase("query devices (attributes, no context)");
            // --no-free promises no context: the localized allocation is then tried without one only.
            const LocalityProbe probe = plan.no_free ? LocalityProbe::no_context : LocalityProbe::context_if_needed;
            for (auto& d : devices) d.locality = query_locality(driver.api(), d.ordinal, probe);
            mark_phase("locality domains (a localized allocation on a 13.4 driver)");
            if (nvml) {
                query_memory(driver.api(), *nvml, devices, true);
                mark_phase("memory (NVML, contexts where NVML cannot answer)");
            }
            for (const auto& d : devices) {
                if (!d.free_error.empty()) {
                    report.add_warning(fmt::format("device {}: free memory unknown: {}", d.ordinal, d.free_error), {},
                                       d.ordinal);
                }
            }
            DevicesResults results;
            results.device_count = count;
            results.devices = devices;
            if (nvml) results.nvml = nvml->info();
            report.set_results(std::move(results));
            if (nvml) warn_unloaded_libnvml(report, globals, nvml->info());
            add_device_metrics(report, devices, count);
            add_driver_info(report, nvml ? nvml->info().driver_version : std::string());
            if (count == 0) {
                report.tables.push_back(Table{"Devices", {}, {}, {"no CUDA device is visible on this node"}});
            } else {
                for (auto& t : devices_tables(devices)) report.tables.push_back(std::move(t));
            }
        });
}

}  // namespace

void register_devices(CLI::App& root, const Globals& globals, Runner& runner) {
    auto opts = std::make_shared<DevicesOptions>();
    CLI::App* app = root.add_subcommand("devices", "what each device's memory system supports");
    add_device_option(*app, opts->devices);
    app->add_flag("--no-free", opts->no_free,
                  "skip free memory: NVML's figures, and the context on each device that NVML cannot answer for");
    app->callback([opts, &globals, &runner] { runner = [opts, &globals] { return run_devices(*opts, globals); }; });
}

}  // namespace cumemctl::cmd
