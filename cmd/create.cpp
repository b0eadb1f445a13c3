// `cumemctl create`: one allocation through cuMemCreate, what the driver granted, and optionally mapped,
// verified on the device, exported and checked from a second process, with every step timed and every
// resource released (free memory and descriptors before and after in the report).
#include <fmt/format.h>

#include "command.hpp"
#include "create_pool.hpp"
#include "create_report.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/vmm/vmm_create.hpp"
#include "gpu_identity.hpp"
#include "held_errors.hpp"
#include "memory_options.hpp"
#include "util/index_list.hpp"
#include "util/size.hpp"
#include "util/system_root.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

// create's options checked before the driver is loaded: the request, and the device lists whose
// devices are looked up once the driver is.
struct CreatePlan {
    CreateRequest request;
    DeviceList device;                 // --device: one device
    std::optional<DeviceList> access;  // --access
};

// The options as typed. (create --pool adds its options and its branch here.)
struct CreateOptions {
    std::string size;
    std::string device = "0";
    MemoryOptions memory;
    bool round_up = false;
    bool map = false;
    std::string access;  // --access: more devices with read-write access (an index list)
    bool verify = false;
    bool export_handle = false;
    bool import_check = false;
    bool dma_buf = false;  // --dma-buf
    PoolOptions pool;      // --pool: a stream-ordered pool instead (cmd/create_pool.*)

    CreatePlan check() const;
};

// The request, checked before the driver is loaded: sizes, handle types and the implied options.
CreateRequest request_of(const CreateOptions& o) {
    require_pool_flag(o.pool);
    CreateRequest r;
    r.memory = o.memory.to_request();
    r.size = parse_size(o.size);
    if (r.size == 0) {
        throw Error(ExitCode::usage, "invalid size '0': an allocation has at least one granule",
                    "give a size above 0, e.g. 2MiB ('cumemctl granularity' lists the granularity)");
    }
    r.round_up = o.round_up;
    r.verify = o.verify;
    r.import_check = o.import_check;
    r.map = o.map || o.verify || o.import_check;
    if (!o.access.empty() && !r.map) {
        throw Error(ExitCode::usage, "--access grants devices access to a mapping, and nothing is mapped",
                    "add --map (or --verify, which maps and checks the pattern from every listed device)");
    }
    if (o.dma_buf && !r.map) {
        throw Error(ExitCode::usage, "--dma-buf exports the mapped range, and nothing is mapped",
                    "add --map (or --verify, which maps too)");
    }
    r.dma_buf = o.dma_buf;
    if (o.dma_buf) r.proc = system_root("/proc/self/fdinfo") + "/proc";
    r.export_handle = o.export_handle || o.import_check;
    if (r.export_handle && r.memory.handle_type == CU_MEM_HANDLE_TYPE_NONE) {
        throw Error(ExitCode::usage,
                    fmt::format("{} needs a shareable handle type", o.import_check ? "--import-check" : "--export"),
                    "add --handle-type posix-fd or --handle-type fabric");
    }
    if (const char* dir = std::getenv("CUMEMCTL_IMEX_CHANNEL_DIR"); dir != nullptr && *dir != '\0') {
        r.imex_channel_dir = dir;
    }
    r.executable = "/proc/self/exe";
    return r;
}

CreatePlan CreateOptions::check() const {
    CreatePlan plan{request_of(*this), parse_device_list(device), std::nullopt};
    if (!plan.device.names_one()) {
        throw Error(ExitCode::usage, fmt::format("create takes one device, not '{}'", device),
                    "give --device N, a UUID (GPU-...) a PCI bus id or nvidiaN");
    }
    if (!access.empty()) plan.access = parse_device_list(access);
    return plan;
}

Report run_create_command(const CreateOptions& opts, const Globals& globals) {
    const NvmlLoad nvml_load = load_nvml_for_identities(globals);
    return run_command("create", globals, opts, [&](Report& report, Driver& driver, int count, CreatePlan& plan) {
        auto* request = &plan.request;
        request->device = plan.device.select(driver.api(), count, &nvml_load.get()).front();
        const DeviceIdentity id = identities_of(report, globals, driver.api(), nvml_load, {request->device}).front();
        if (plan.access) request->access = plan.access->select(driver.api(), count);
        request->libcuda = driver.info().library;
        CreateResult result;
        judging_holds(
            report, driver.api(), nvml_load.get(), {request->device},
            [&] {
                try {
                    run_create(driver.api(), *request, result);
                } catch (const Error&) {
                    fill_create_report(report, *request, result, id);
                    throw;
                }
                fill_create_report(report, *request, result, id);
            },
            held_scope(request->memory.location.type));
    });
}

// What create --pool takes of create's options, with the cuMemCreate flags that were given.
CreatePoolTarget pool_target(const CreateOptions& o) {
    CreatePoolTarget t{o.device, o.size, o.access, {}};
    for (const auto& [given, name] : {std::pair{o.round_up, "--round-up"}, std::pair{o.map, "--map"},
                                      std::pair{o.verify, "--verify"}, std::pair{o.export_handle, "--export"},
                                      std::pair{o.import_check, "--import-check"}, std::pair{o.dma_buf, "--dma-buf"}}) {
        if (given) t.cumemcreate_flags.emplace_back(name);
    }
    return t;
}

}  // namespace

void register_create(CLI::App& root, const Globals& globals, Runner& runner) {
    auto opts = std::make_shared<CreateOptions>();
    CLI::App* app = root.add_subcommand("create", "create one allocation with cuMemCreate; map, verify, export it");
    app->add_option("--size", opts->size, "bytes, or with a unit: 2MiB, 1.5GiB, 1G (= 1GiB), 10GB (= 10^9 B)")
        ->required();
    app->add_option("-d,--device", opts->device, "the device (default 0)")->capture_default_str();
    add_memory_options(*app, opts->memory);
    app->add_flag("--round-up", opts->round_up, "round a size that is not a multiple of the granularity up");
    app->add_flag("--map", opts->map, "reserve an address range, map the allocation and grant the device access");
    app->add_option("--access", opts->access,
                    "more devices granted read-write access, e.g. 1 or 0,2-3 (with --map; with --verify each "
                    "checks the pattern; with --pool: cuMemPoolSetAccess)");
    app->add_flag("--verify", opts->verify,
                  "write a pattern over every byte and check it on the device (implies --map)");
    app->add_flag("--export", opts->export_handle, "export the shareable handle (posix-fd or fabric)");
    app->add_flag("--import-check", opts->import_check,
                  "a second process imports the handle, maps it and checks the pattern (implies --map, --export)");
    app->add_flag("--dma-buf", opts->dma_buf,
                  "export the mapped range as a dma-buf (GPUDirect RDMA), say what the kernel says of it, close it "
                  "(needs --map)");
    add_pool_options(*app, opts->pool);
    app->callback([opts, &globals, &runner] {
        runner = [opts, &globals] {
            if (opts->pool.pool) return run_create_pool({opts->pool, opts->memory, pool_target(*opts)}, globals);
            return run_create_command(*opts, globals);
        };
    });
}

}  // namespace cumemctl::cmd
