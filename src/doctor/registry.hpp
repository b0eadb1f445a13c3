// The catalogue of doctor's checks: what each is called, where it runs, and the function that runs it.
//
// Adding a check: write `CheckOutcome check_X(DoctorContext&, DeviceState*)` (device checks get their
// DeviceState, node checks nullptr), add a line to the catalogue in registry.cpp, and document it in
// man/cumemctl-doctor.1. A device check that needs a context calls `device->context()` (retained
// once per device and shared); one that needs attributes calls `device->info()`. It returns an
// outcome, or throws Error (reported as fail with the driver's diagnosis) or CheckSkipped.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "doctor/check.hpp"
#include "doctor/context.hpp"

namespace cumemctl::doctor {

// Where a check runs. setup: first, in order, on the main thread (the driver, the devices);
// device: once per selected device, each device on its own thread; node: after the device checks,
// on the main thread (may read what the devices support).
enum class CheckScope { setup, device, node };

// A check function; `device` is null for setup and node checks.
using CheckFn = CheckOutcome (*)(DoctorContext& ctx, DeviceState* device);

// One entry of the catalogue, its fields in the order the catalogue's entries give them (the padding that
// order costs is a few hundred bytes over the whole table).
struct CheckSpec {        // NOLINT(clang-analyzer-optin.performance.Padding)
    std::string_view id;  // stable name for --checks, JSON and metrics ("imex-channels")
    CheckScope scope;
    std::string_view summary;  // one line for the list of checks and the manual: check_summary words it
    CheckFn run;
    bool quick = false;  // runs in --quick: makes no context, allocates no GPU memory, starts no second process
                         // of cumemctl (imex-domain runs nvidia-imex-ctl, bounded; gpudirect reads only the
                         // attributes and the modules under --quick)
};

// A check's summary, the flags it names ({quick}, {expect_gpus}, {expect_driver}) as doctor spells them.
std::string check_summary(const CheckSpec& check);

// A scope as --list-checks names it: "setup", "device", "node".
std::string_view scope_name(CheckScope scope);

// Every check, in the order doctor runs and reports them.
const std::vector<CheckSpec>& check_catalogue();

// The ids of the checks that --quick runs, in catalogue order.
std::vector<std::string> quick_check_ids();

// --checks under --quick: every id must be a quick check, else a usage error that names the ones there are.
void require_quick(const std::vector<std::string>& ids);

// Parses --checks: ids separated by commas ("driver,imex-channels") or "all". An unknown id is a
// usage error that lists the ids there are. Returns the ids in catalogue order, without repeats.
std::vector<std::string> parse_check_list(std::string_view text);

// Starts the device's importer (gpu/importer: the one second process that serves its posix-fd-ipc and
// ipc-pool checks) now, where one of them is among `checks`, applies to the device and none was
// started early, so that its start-up (cuInit, its context) overlaps the device's checks before them;
// the checks take it from DeviceState::importer() and give it back. Never throws: an importer that
// cannot start is left to the checks, which start their own and report why it failed.
void start_importer(DoctorContext& ctx, DeviceState& device, const std::vector<std::string_view>& checks);

// The most importers doctor starts before the driver lists its GPUs: more GPUs than any node has (an
// NVL72 compute tray has 4, an HGX board 8, the largest PCIe servers 16).
inline constexpr std::size_t kMostEarlyImporters = 64;

// Whether importers start at doctor's start (start_importers_early): where one of `checks` needs one, the
// driver loaded, every device is asked for and CUDA_VISIBLE_DEVICES hides none (else the driver's
// devices may be fewer than those listed).
bool early_importers_apply(const DoctorContext& ctx, const std::vector<std::string_view>& checks);

// The same at doctor's start, before the driver lists its GPUs, once for each of `uuids` (the kernel's
// list, kernel_gpus, else NVML's; CUDA_VISIBLE_DEVICES set to it), so that their start-up overlaps this
// process's; none for a list of more than 64. An importer for a GPU the driver does not show, or whose
// checks do not apply (capabilities are not known yet), is ended with the device's checks. Never throws.
std::vector<EarlyImporter> start_importers_early(const DoctorContext& ctx, std::vector<std::string> uuids);

// The checks of the catalogue (defined in checks_*.cpp).
CheckOutcome check_driver(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_devices(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_inventory(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_peer_access(DoctorContext& ctx, DeviceState* device);

// The NVIDIA kernel module's version: /sys/module/nvidia/version, else the "Kernel Module" field of
// /proc/driver/nvidia/version (under the sysroot); empty where neither says.
std::string kernel_module_version(const DoctorContext& ctx);
// The NVIDIA driver's version as nvidia-smi says it: `nvml`'s (nvmlSystemGetDriverVersion) where NVML is
// loaded and says it, else the kernel module's (kernel_module_version); empty where neither says.
std::string driver_version(const DoctorContext& ctx, const nvml::Library* nvml);
CheckOutcome check_context(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_capabilities(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_logical_endpoints(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_vmm(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_locality(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_posix_fd_ipc(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_pool_trim(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_ipc_pool(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_host_alloc(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_fabric_alloc(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_imex_channels(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_memory_health(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_fabric(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_imex_domain(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_gpudirect(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_xid(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_pcie_link(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_nvlink(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_host_bandwidth(DoctorContext& ctx, DeviceState* device);
CheckOutcome check_memory_bandwidth(DoctorContext& ctx, DeviceState* device);

}  // namespace cumemctl::doctor
