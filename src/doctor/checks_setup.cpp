// The setup checks: the driver loads and initialises, and it sees devices.
#include <cstdlib>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "base/setting.hpp"
#include "cuda/driver_call.hpp"
#include "cuda/driver_info.hpp"
#include "doctor/registry.hpp"
#include "doctor/runner.hpp"
#include "util/text_file.hpp"

namespace cumemctl::doctor {

std::string kernel_module_version(const DoctorContext& ctx) {
    std::istringstream sys(try_read_text_file(ctx.path("/sys/module/nvidia/version")).value_or(""));
    std::string version;
    if (sys >> version) return version;
    std::istringstream proc(try_read_text_file(ctx.path("/proc/driver/nvidia/version")).value_or(""));
    std::string line;
    while (std::getline(proc, line)) {
        const auto at = line.find("Kernel Module");
        if (at == std::string::npos) continue;
        std::istringstream rest(line.substr(at + 13));
        if (rest >> version) return version;
    }
    return {};
}

std::string driver_version(const DoctorContext& ctx, const nvml::Library* nvml) {
    if (nvml != nullptr && !nvml->info().driver_version.empty()) return nvml->info().driver_version;
    return kernel_module_version(ctx);
}

namespace {

// A remedy for cuInit failing with `result`.
std::string init_remedy(CUresult result) {
    if (result == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH) {
        return "libcuda and the loaded kernel module are of different driver versions: reboot, or reload the nvidia "
               "module, after a driver upgrade";
    }
    if (result == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) {
        return "a forward-compatibility libcuda does not support this GPU: use the libcuda that came with the driver";
    }
    if (result == CUDA_ERROR_SYSTEM_NOT_READY) {
        return "on an NVSwitch system, start the fabric manager (systemctl start nvidia-fabricmanager) and wait for it";
    }
    return "check that the nvidia kernel module is loaded (lsmod | grep nvidia) and /dev/nvidia* exist; "
           "dmesg | grep -i nvrm tells more";
}

// "NVIDIA H200" for one device, "8 x NVIDIA H200" for eight alike, "NVIDIA A100, NVIDIA H100" otherwise.
std::string describe_names(const std::vector<std::string>& names) {
    std::map<std::string, int> counts;
    for (const auto& n : names) ++counts[n];
    std::vector<std::string> parts;
    for (const auto& [name, n] : counts) parts.push_back(n == 1 ? name : fmt::format("{} x {}", n, name));
    return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

CheckOutcome check_driver(DoctorContext& ctx, DeviceState*) {
    const DriverInfo& info = ctx.driver->info();
    DriverEvidence details{info.library, {}, {}, {}};
    if (!ctx.driver->loaded()) {
        CheckOutcome o = CheckOutcome::fail(
            "no usable CUDA driver: " + info.error,
            fmt::format("install the NVIDIA driver, or point {} (or CUMEMCTL_LIBCUDA) at its libcuda.so.1",
                        setting_name(Setting::libcuda)),
            details);
        o.brief = "no driver";
        return o;
    }
    ctx.ensure_initialised();
    const std::string module = kernel_module_version(ctx);
    details.cuda_version = info.version;
    details.version_string = cuda_version_string(info.version);
    details.kernel_module = text_or_none(module);
    if (ctx.init_error) {
        CheckOutcome o = outcome_from_error(*ctx.init_error);
        if (o.driver) o.remedy = init_remedy(result_of(*o.driver));
        o.evidence = std::move(details);
        return o;
    }
    return CheckOutcome::pass(fmt::format("CUDA {} driver{}", cuda_version_string(info.version),
                                          module.empty() ? "" : ", kernel module " + module),
                              std::move(details));
}

CheckOutcome check_devices(DoctorContext& ctx, DeviceState*) {
    ctx.ensure_initialised();
    if (!ctx.driver_ready()) return CheckOutcome::skip("the driver did not load or initialise (see the driver check)");
    DevicesEvidence details{ctx.device_count, {}, {}};
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    if (visible != nullptr) details.cuda_visible_devices = visible;
    if (ctx.device_count == 0) {
        CheckOutcome o = CheckOutcome::fail(
            visible != nullptr ? fmt::format("the driver sees no CUDA device (CUDA_VISIBLE_DEVICES=\"{}\")", visible)
                               : "the driver sees no CUDA device",
            "check that nvidia-smi lists the GPUs; in a container, start it with them (docker run --gpus all, or the "
            "NVIDIA container runtime); check CUDA_VISIBLE_DEVICES",
            std::move(details));
        o.brief = "no GPU";
        return o;
    }
    const DriverApi& api = ctx.driver->api();
    std::vector<std::string> names;
    for (int i = 0; i < ctx.device_count; ++i) {
        char name[256] = {};
        names.emplace_back(api.cuDeviceGetName(name, sizeof name, i) == CUDA_SUCCESS ? name : "unknown");
    }
    details.names = names;
    return CheckOutcome::pass(
        fmt::format("{} device{}: {}", ctx.device_count, ctx.device_count == 1 ? "" : "s", describe_names(names)),
        std::move(details));
}

}  // namespace cumemctl::doctor
