// `cumemctl le-bind`: the CUDA 13.3 logical endpoint round trip (reserve, limits, create, query, bind,
// undo), every step with its result and time; on an older driver, why there are no logical endpoints.
#include <fmt/format.h>

#include "command.hpp"
#include "util/duration.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/le/logical_endpoint_bind.hpp"
#include "gpu_identity.hpp"
#include "le_bind_results.hpp"
#include "steps/step_json.hpp"
#include "util/size.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

struct LeBindOptions {
    std::string device = "0";
    bool device_given = false;
    std::string devices;
    std::string type = "unicast";
    std::string size;
    std::string offset = "0";
    std::string mem_offset = "0";
    std::string bind_size;
    std::string location = "device";
    std::string handle_type = "none";
    bool counted_ops = false;
    bool by_address = false;
    bool limits_only = false;
    double timeout = 5;

    // The options parsed before the driver is loaded: the request and the device list it selects from.
    std::pair<LeBindRequest, DeviceList> check() const;
};

// Parses the options (usage errors); the devices are selected once the driver is loaded.
std::pair<LeBindRequest, DeviceList> LeBindOptions::check() const {
    const LeBindOptions& o = *this;
    LeBindRequest r;
    DeviceList devices;
    r.multicast = o.type == "multicast";
    if (r.multicast) {
        if (o.devices.empty()) {
            throw Error(ExitCode::usage, "--type multicast needs the team: --devices LIST",
                        "for example --devices 0-3");
        }
        if (o.device_given)
            throw Error(ExitCode::usage, "--device is for unicast; a team is given with --devices LIST");
        devices = parse_device_list(o.devices);
    } else {
        if (!o.devices.empty()) {
            throw Error(ExitCode::usage, "--devices is for --type multicast", "give the owner device with --device N");
        }
        devices = parse_device_list(o.device);
        if (!devices.names_one()) {
            throw Error(ExitCode::usage, "a unicast endpoint has one owner device",
                        "give one device with --device: N, a UUID (GPU-...) a PCI bus id or nvidiaN");
        }
    }
    r.size = parse_size(o.size);
    r.offset = parse_size(o.offset);
    r.mem_offset = parse_size(o.mem_offset);
    if (!o.bind_size.empty()) r.bind_size = parse_size(o.bind_size);
    r.location = parse_location(o.location);
    r.fabric = o.handle_type == "fabric";
    r.counted_ops = o.counted_ops;
    r.by_address = o.by_address;
    r.limits_only = o.limits_only;
    r.timeout_seconds = o.timeout;
    return {r, devices};
}

void fill_report(Report& report, const LeBindRequest& r, const LeBindOutcome& o,
                 const std::vector<DeviceIdentity>& ids) {
    LeBindResults results;
    results.request = r;
    results.outcome = o;
    results.gpus = ids;
    report.set_results(std::move(results));
    for (const auto& w : o.warnings) report.add_warning(w);
    if (r.limits_only && o.violation) {
        report.add_warning(fmt::format("with these limits, {}", o.violation->message),
                           o.violation->nearest.empty() ? std::string{} : nearest_remedy(*o.violation));
    }
    for (const auto& p : o.undo_failures) report.add_error(p);
}

Report run_le_bind_command(const LeBindOptions& opts, const Globals& globals) {
    const NvmlLoad nvml_load = load_nvml_for_identities(globals);
    return run_command("le-bind", globals, opts, [&](Report& report, Driver& driver, int count, auto& checked) {
        LeBindRequest& request = checked.first;
        request.devices = checked.second.select(driver.api(), count, &nvml_load.get());
        const std::vector<DeviceIdentity> ids =
            identities_of(report, globals, driver.api(), nvml_load, request.devices);
        LeBindOutcome outcome;
        try {
            run_le_bind(driver, request, outcome);
        } catch (const Error& e) {
            report.add_error(e.problem());
            fill_report(report, request, outcome, ids);
            return;
        }
        fill_report(report, request, outcome, ids);
    });
}

}  // namespace

void register_le_bind(CLI::App& root, const Globals& globals, Runner& runner) {
    auto o = std::make_shared<LeBindOptions>();
    CLI::App* app = root.add_subcommand("le-bind", "bind memory to a CUDA 13.3 logical endpoint and undo it again");
    CLI::Option* device =
        app->add_option(
               "-d,--device", o->device,
               "the owner device of a unicast endpoint: a CUDA ordinal, a UUID (GPU-...), a PCI bus id or nvidiaN")
            ->capture_default_str();
    app->add_option("--size", o->size, "bytes bindable per device (the endpoint size), e.g. 2MiB")->required();
    app->add_option("--offset", o->offset, "where in the endpoint to bind")->capture_default_str();
    app->add_option("--mem-offset", o->mem_offset, "where in the memory the binding starts")->capture_default_str();
    app->add_option("--bind-size", o->bind_size, "bytes to bind (default: the largest that fits)");
    app->add_option("--location", o->location, "device, host-numa or host-numa:N")->capture_default_str();
    app->add_option("--handle-type", o->handle_type, "none or fabric (exportable endpoint and memory)")
        ->check(CLI::IsMember({"none", "fabric"}))
        ->capture_default_str();
    app->add_flag("--counted-ops", o->counted_ops, "create the endpoint for counted operations");
    app->add_flag("--by-address", o->by_address, "bind a mapped address (cuLogicalEndpointBindAddr)");
    app->add_option("--type", o->type, "unicast or multicast")
        ->check(CLI::IsMember({"unicast", "multicast"}))
        ->capture_default_str();
    app->add_option("--devices", o->devices, "the multicast team: a list (0,2), a range (0-3) or all");
    app->add_flag("--limits-only", o->limits_only, "ask the limits for these properties and change nothing");
    app->add_option("--timeout", o->timeout, "seconds to wait for the endpoint to be constructed")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app->callback([o, device, &globals, &runner] {
        o->device_given = device->count() > 0;
        runner = [o, &globals] { return run_le_bind_command(*o, globals); };
    });
}

}  // namespace cumemctl::cmd
