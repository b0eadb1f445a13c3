// `cumemctl devices`: what each device's memory system supports.
#include <algorithm>

#include <fmt/format.h>

#include "command.hpp"
#include "commands.hpp"
#include "gpu/devices.hpp"
#include "util/size.hpp"

namespace cumemctl::cmd {
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

std::string cap_text(const Capability& cap) {
    if (!cap.value) return "unknown";
    if (cap.key == "host_numa_id") return std::to_string(*cap.value);
    if (cap.key == "pool_handle_types") {
        const auto names = handle_type_names(*cap.value);
        return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ","));
    }
    return *cap.value != 0 ? "yes" : "no";
}

nlohmann::json device_json(const DeviceInfo& d) {
    const nlohmann::json caps = capabilities_json(d.capabilities);
    nlohmann::json j{{"ordinal", d.ordinal},
                     {"name", d.name},
                     {"uuid", d.uuid},
                     {"pci_bus_id", d.pci_bus_id},
                     {"compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)},
                     {"total_bytes", d.total_bytes},
                     {"capabilities", caps}};
    j["free_bytes"] = d.free_bytes ? nlohmann::json(*d.free_bytes) : nlohmann::json(nullptr);
    if (!d.free_error.empty()) j["free_error"] = d.free_error;
    return j;
}

Table devices_table(const std::vector<DeviceInfo>& devices) {
    Table t;
    t.title = "Devices";
    t.columns.push_back("");
    for (const auto& d : devices) t.columns.push_back(fmt::format("GPU {}", d.ordinal));
    auto row = [&](std::string label, auto cell) {
        std::vector<std::string> r{std::move(label)};
        for (const auto& d : devices) r.push_back(cell(d));
        t.rows.push_back(std::move(r));
    };
    row("name", [](const DeviceInfo& d) { return d.name; });
    row("uuid", [](const DeviceInfo& d) { return d.uuid.empty() ? "unknown" : d.uuid; });
    row("compute capability", [](const DeviceInfo& d) { return fmt::format("{}.{}", d.cc_major, d.cc_minor); });
    row("total memory", [](const DeviceInfo& d) { return format_size(d.total_bytes); });
    row("free memory",
        [](const DeviceInfo& d) { return d.free_bytes ? format_size(*d.free_bytes) : std::string("unknown"); });
    for (std::size_t i = 0; i < capability_catalogue().size(); ++i) {
        row(std::string(capability_catalogue()[i].label),
            [i](const DeviceInfo& d) { return cap_text(d.capabilities[i]); });
    }
    return t;
}

// The Prometheus gauges of `devices`: count, identity, memory and every known capability.
void add_device_metrics(Report& report, const std::vector<DeviceInfo>& devices, int count) {
    report.add_metric("devices", "CUDA devices the driver sees", {}, count);
    for (const auto& d : devices) {
        const std::string dev = std::to_string(d.ordinal);
        report.add_metric("device_info", "a device's identity (always 1)",
                          {{"device", dev},
                           {"name", d.name},
                           {"uuid", d.uuid},
                           {"pci_bus_id", d.pci_bus_id},
                           {"compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)}},
                          1);
        report.add_metric("device_memory_total_bytes", "a device's memory, bytes", {{"device", dev}},
                          static_cast<double>(d.total_bytes));
        if (d.free_bytes) {
            report.add_metric("device_memory_free_bytes", "a device's free memory as cuMemGetInfo reports it, bytes",
                              {{"device", dev}}, static_cast<double>(*d.free_bytes));
        }
        for (const auto& cap : d.capabilities) {
            if (!cap.value) continue;  // unknown to this driver: no sample
            if (cap.key == "host_numa_id") {
                report.add_metric("device_host_numa_id", "the host NUMA node closest to a device (-1: none)",
                                  {{"device", dev}}, *cap.value);
            } else if (cap.key == "pool_handle_types") {
                for (const char* type : {"posix-fd", "fabric"}) {
                    const auto names = handle_type_names(*cap.value);
                    const bool has = std::find(names.begin(), names.end(), type) != names.end();
                    report.add_metric("device_pool_handle_type", "whether memory pools can export this IPC handle type",
                                      {{"device", dev}, {"type", type}}, has ? 1 : 0);
                }
            } else {
                report.add_metric(
                    "device_capability",
                    "a memory capability of a device (1 yes, 0 no; absent when the driver does not know it)",
                    {{"device", dev}, {"capability", std::string(cap.key)}}, *cap.value != 0 ? 1 : 0);
            }
        }
    }
}

Report run_devices(const DevicesOptions& opts, const Globals& globals) {
    return run_command(
        "devices", globals, opts, [&](Report& report, Driver& driver, int count, const DevicesPlan& plan) {
            const auto selected = plan.devices.select(count);
            std::vector<DeviceInfo> devices;
            for (int ordinal : selected) devices.push_back(query_device(driver.api(), ordinal));
            if (!plan.no_free) query_free_memory(driver.api(), devices);
            nlohmann::json list = nlohmann::json::array();
            for (const auto& d : devices) {
                list.push_back(device_json(d));
                if (!d.free_error.empty()) {
                    report.add_warning(fmt::format("device {}: free memory unknown: {}", d.ordinal, d.free_error), {},
                                       d.ordinal);
                }
            }
            report.results = {{"device_count", count}, {"devices", std::move(list)}};
            add_device_metrics(report, devices, count);
            if (count == 0) {
                report.tables.push_back(Table{"Devices", {}, {}, {"no CUDA device is visible on this node"}});
            } else {
                report.tables.push_back(devices_table(devices));
            }
        });
}

}  // namespace

void register_devices(CLI::App& root, const Globals& globals, Runner& runner) {
    auto opts = std::make_shared<DevicesOptions>();
    CLI::App* app = root.add_subcommand("devices", "what each device's memory system supports");
    add_device_option(*app, opts->devices);
    app->add_flag("--no-free", opts->no_free, "skip free memory (it needs a context on each device)");
    app->callback([opts, &globals, &runner] { runner = [opts, &globals] { return run_devices(*opts, globals); }; });
}

}  // namespace cumemctl::cmd
