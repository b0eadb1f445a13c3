// `cumemctl create --pool`: see create_pool.hpp.
#include "create_pool.hpp"

#include <cstdlib>
#include <random>

#include <fmt/format.h>

#include "create_pool_results.hpp"
#include "create_report.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/pool/pool_create.hpp"
#include "gpu_identity.hpp"
#include "held_errors.hpp"
#include "gpu/device/primary_context.hpp"
#include "pool_report.hpp"
#include "util/size.hpp"

namespace cumemctl::cmd {
using namespace gpu;

void add_pool_options(CLI::App& app, PoolOptions& o) {
    app.add_flag("--pool", o.pool, "make a stream-ordered pool (cuMemPoolCreate) and allocate from it");
    add_max_size_option(app, o);
    app.add_flag("--ipc-check", o.ipc_check,
                 "share the pool and a block with a second process, which checks and frees it first");
}

void require_pool_flag(const PoolOptions& o) {
    if (!o.ipc_check && o.max_size == "0") return;
    throw Error(ExitCode::usage, "--ipc-check and --max-size are options of a pool",
                "add --pool, or use --import-check for a cuMemCreate allocation");
}

CreatePoolPlan CreatePoolCommand::check() const {
    if (!target.cumemcreate_flags.empty()) {
        throw Error(ExitCode::usage,
                    fmt::format("{} apply to cuMemCreate allocations, not to a pool",
                                fmt::join(target.cumemcreate_flags, ", ")),
                    "leave them out with --pool (--ipc-check shares a pool with a second process)");
    }
    CreatePoolPlan plan;
    plan.request = pool_request(memory, options);
    plan.size = parse_size(target.size);
    if (plan.size == 0) throw Error(ExitCode::usage, "--size 0 allocates nothing", "give a size such as 2MiB");
    if (options.ipc_check && plan.request.handle_type == CU_MEM_HANDLE_TYPE_NONE) {
        throw Error(ExitCode::usage, "--ipc-check needs a pool that can be exported",
                    "give --handle-type posix-fd (or fabric, with an IMEX channel)");
    }
    if (options.ipc_check && !is_device_memory(plan.request.location.type)) {
        throw Error(ExitCode::usage, "--ipc-check shares device pools",
                    "use --location device (or domain:I) with --ipc-check");
    }
    plan.devices = parse_device_list(target.devices);
    if (!target.access.empty()) plan.access = parse_device_list(target.access);
    return plan;
}

Report run_create_pool(const CreatePoolCommand& command, const Globals& globals) {
    const PoolOptions& o = command.options;
    const NvmlLoad nvml_load = load_nvml_for_identities(globals);
    return run_command(
        "create", globals, command, [&](Report& report, Driver& driver, int count, const CreatePoolPlan& plan) {
            const PoolRequest& request = plan.request;
            const std::uint64_t size = plan.size;
            const auto devices = plan.devices.select(driver.api(), count, &nvml_load.get());
            const std::vector<int> access = plan.access ? plan.access->select(driver.api(), count) : std::vector<int>{};
            // Filled device by device: a device that fails keeps the ones before it in the report.
            const auto results = std::make_shared<CreatePoolResults>();
            report.results = results;
            const std::vector<DeviceIdentity> ids = identities_of(report, globals, driver.api(), nvml_load, devices);
            std::random_device random;
            judging_holds(
                report, driver.api(), nvml_load.get(), devices,
                [&] {
                    for (int device : devices) {
                        const PrimaryContext context(driver.api(), device);
                        std::optional<IpcRequest> ipc;
                        if (o.ipc_check) {
                            ipc.emplace();
                            ipc->seed = (std::uint64_t{random()} << 32) | random();
                            ipc->libcuda = driver.info().library;
                            if (const char* dir = std::getenv("CUMEMCTL_IMEX_CHANNEL_DIR");
                                dir != nullptr && *dir != '\0') {
                                ipc->imex_channel_dir = dir;
                            }
                        }
                        results->devices.push_back(
                            {identity_in(ids, device),
                             create_pool_and_check(driver.api(), device, request, size, ipc, access)});
                        const CreatePoolResult& r = results->devices.back().result;
                        if (r.before && r.after)
                            warn_unbalanced(report, *r.before, *r.after, r.outcome.steps(), device);
                        if (r.outcome.problem()) {
                            Problem p = *r.outcome.problem();
                            p.device = device;
                            report.add_error(std::move(p));
                        }
                    }
                },
                held_scope(request.location.type));
        });
}

}  // namespace cumemctl::cmd
