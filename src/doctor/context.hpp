// What doctor's checks work with: the driver, the node's files, and one state per device (its
// attributes queried once, its primary context retained once and shared by every check of the device).
#pragma once

#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuda/driver.hpp"
#include "gpu/bandwidth/copy_bandwidth.hpp"
#include "gpu/bandwidth/host_placement.hpp"
#include "gpu/bandwidth/limits.hpp"
#include "gpu/device/device_selector.hpp"
#include "gpu/device/devices.hpp"
#include "base/error.hpp"
#include "gpu/device/primary_context.hpp"
#include "ipc/child.hpp"
#include "nvml/fabric_info.hpp"
#include "nvml/nvml.hpp"

namespace cumemctl::doctor {

// The default budget of --timeout: within Slurm's 60 s limit on a health check program, with room for
// the process.
inline constexpr double kDefaultBudgetSeconds = 45;

// The defaults of --bandwidth-warn and --bandwidth-fail: a measured copy below these fractions of its
// path's physical limit warns or fails (host-bandwidth, memory-bandwidth). The H200 measured well above
// both (man cumemctl-doctor gives the figures and their source).
inline constexpr double kDefaultBandwidthWarn = 0.7;
inline constexpr double kDefaultBandwidthFail = 0.5;

class Progress;

// The driver's answer for a capability key of the catalogue ("vmm", "fabric"); nullopt where the
// driver does not know it.
std::optional<int> capability_of(const gpu::DeviceInfo& info, std::string_view key);

// What `doctor` was asked for.
struct DoctorOptions {
    std::vector<std::string> checks;  // check ids to run; empty runs every check
    gpu::DeviceList devices;          // the --device list, parsed (every device by default)
    std::string sysroot;              // prefix of /proc, /sys, /dev and /etc paths ("" is the real system)
    std::string imex_config;          // the IMEX settings file (imex-domain); "" is /etc/nvidia-imex/config.cfg
    std::string imex_ctl;             // nvidia-imex-ctl to ask (imex-domain); "" searches where DCGM does
    std::string user;                 // judge the channel nodes for this user (imex-channels); "" is this process
    bool expect_idle = false;         // other processes holding a device's memory are a failure, not busy
    bool quick = false;               // only the catalogue's quick checks: no context, no GPU memory, no second process
    std::optional<int> expect_gpus;   // --expect-gpus: CUDA must see this many GPUs (else inventory fails)
    std::string expect_driver;        // --expect-driver: the driver version the node must have ("" none)
    double budget_seconds = kDefaultBudgetSeconds;  // --timeout: the whole run answers within it (doctor/budget.hpp)
    double bandwidth_warn =
        kDefaultBandwidthWarn;  // --bandwidth-warn: the fraction of a limit below which a copy warns
    double bandwidth_fail = kDefaultBandwidthFail;  // --bandwidth-fail: ... below which it fails
};

// One device under examination. Each device's checks run on one thread, in catalogue order; the
// primary context is retained on first use and released by finish() on that same thread.
class DeviceState {
public:
    DeviceState(const DriverApi& api, int ordinal) : api_(api), ordinal_(ordinal) {}
    DeviceState(const DeviceState&) = delete;
    DeviceState& operator=(const DeviceState&) = delete;
    ~DeviceState();

    int ordinal() const { return ordinal_; }
    const DriverApi& api() const { return api_; }

    // The device's attributes and capabilities (no context needed); queried once. Throws Error when
    // the query fails, and CheckSkipped on later calls.
    const gpu::DeviceInfo& info();

    // The device's primary context, current on the calling thread; retained once (the operations of
    // src/gpu/ that checks call restore it when they return). Throws Error when it cannot be made, and
    // CheckSkipped on later calls (the context check reports the failure).
    CUcontext context();

    // Where the device's copies go and how fast they may be: the limits of its memory paths
    // (gpu/bandwidth/limits.hpp) and its host memory's NUMA placement (host_placement.hpp).
    struct Paths {
        gpu::DeviceLimits limits;
        gpu::HostPlacement placement;
    };
    // Starts asking NVML and the driver for the paths on a thread of their own (their link and affinity
    // questions take milliseconds), so that they are ready when the copy checks come. Where the
    // attributes cannot be queried, paths() asks later.
    void ask_paths_ahead(const nvml::Library* nvml, const std::string& sysroot);
    // The paths, asked once (ahead, or now). Throws as info() does.
    const Paths& paths(const nvml::Library* nvml, const std::string& sysroot);

    // The attributes where they can be queried, without recording a failure (info() reports it):
    // for deciding early what to start ahead. Null where the query fails.
    const gpu::DeviceInfo* peek_info() noexcept;

    // The device's importer (gpu/importer): the second process of its IPC checks, started ahead (its
    // start-up overlaps the checks before them) and kept between them; empty where none was started or
    // one was ended. The checks take it from here and give it back.
    std::optional<ipc::Child>& importer() { return importer_; }

    // Tells the importer it has no request left (this end sends no more): it releases its context, says
    // so by ending its side, and exits, while this process goes on.
    void let_importer_go();
    // Lets the importer go and waits until it has released its context (its side of the socket ended):
    // the copy checks measure with no teardown of it beside them. finish() waits for its exit.
    void end_importer();
    // Lets the importer go, releases the context if one was retained (on the thread that ran the
    // checks), then waits for the importer.
    void finish();

private:
    const DriverApi& api_;
    int ordinal_;
    std::optional<ipc::Child> importer_;
    bool importer_let_go_ = false;
    std::optional<gpu::DeviceInfo> info_;
    std::future<Paths> paths_ahead_;
    std::optional<Paths> paths_;
    std::string info_error_;
    std::optional<gpu::PrimaryContext> context_;  // the one primary-context holder of src/gpu
    std::string context_error_;
};

// An importer started at doctor's start, before cuInit, for the GPU NVML names `uuid`: handed to the
// DeviceState of the device with that UUID once the driver lists the devices.
struct EarlyImporter {
    std::string uuid;
    ipc::Child child;
};

// The node-wide state every check may read. The runner fills it in order: the driver (loaded or
// not), then initialisation, then the selected devices.
struct DoctorContext {
    Driver* driver = nullptr;
    const nvml::Library* nvml = nullptr;  // NVML when the caller loaded it (memory-health skips without)
    Progress* progress = nullptr;         // where a run under a time budget records what it has done
    DoctorOptions options;
    bool init_tried = false;
    std::optional<Problem> init_error;  // cuInit failed (not "no device")
    int device_count = -1;              // after a successful cuInit
    std::vector<DeviceState*> devices;  // the selected devices, in order

    // host-bandwidth at the full level with several GPUs: every GPU's host copies at once, made once a
    // run by whichever check needs them first (checks_bandwidth.cpp).
    struct HostCopiesAtOnce {
        std::once_flag once;
        std::vector<int> ordinals;                          // the GPUs, in order
        std::vector<std::vector<gpu::CopyFigure>> figures;  // each GPU's h2d and d2h at once
        std::string error;                                  // why they could not be made
    };
    std::shared_ptr<HostCopiesAtOnce> host_at_once = std::make_shared<HostCopiesAtOnce>();

    // A path of the node's system files, under options.sysroot.
    std::string path(std::string_view absolute) const { return options.sysroot + std::string(absolute); }

    // Calls cuInit once (if the driver loaded) and records the device count or the failure.
    void ensure_initialised();

    // NVML's handle of the device with this UUID, or nullopt with `why` (no NVML, no UUID, not listed).
    std::optional<nvml::Device> nvml_device(const std::string& uuid, std::string& why) const;

    // Every GPU NVML lists on the node (whatever CUDA_VISIBLE_DEVICES hides) with its fabric info,
    // asked once a run by whichever check asks first (the fabric checks of every device, imex-domain);
    // empty without NVML.
    const std::vector<std::pair<std::string, nvml::FabricInfo>>& node_fabric() const;

    // Whether the driver loaded and initialised.
    bool driver_ready() const { return driver != nullptr && driver->loaded() && device_count >= 0; }

    // The IMEX settings file to read: --imex-config, else /etc/nvidia-imex/config.cfg (under the sysroot
    // where ctx.path() is asked).
    std::string imex_config_path() const;

private:
    struct FabricCache {
        std::once_flag once;
        std::vector<std::pair<std::string, nvml::FabricInfo>> gpus;
    };
    std::shared_ptr<FabricCache> fabric_ = std::make_shared<FabricCache>();
};

}  // namespace cumemctl::doctor
