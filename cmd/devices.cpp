// `cumemctl devices`: what each device's memory system supports.
#include <algorithm>

#include <fmt/format.h>

#include "command.hpp"
#include "devices_results.hpp"
#include "gpu_identity.hpp"
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
            if (nvml) warn_unloaded_libnvml(report, globals, nvml->info());
            report.set_results(std::move(results));
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
