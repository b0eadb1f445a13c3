// The inventory check: the GPUs CUDA sees against NVML's and the kernel's (/proc/driver/nvidia/gpus), so
// that a GPU that fell off CUDA's view is named by its PCI bus id; --expect-gpus and --expect-driver make
// a mismatch a failure. No context: part of --quick.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "doctor/kernel_gpus.hpp"
#include "doctor/registry.hpp"
#include "gpu/device/device_selector.hpp"
#include "util/text_file.hpp"

namespace cumemctl::doctor {
namespace {

// One GPU as a source lists it; a field is empty where that source does not say.
struct Seen {
    std::string bus;   // "00000000:19:00.0"
    std::string uuid;  // "GPU-..."
};

// A PCI bus id as nvidia-smi writes it, as every result names a GPU ("0000:19:00.0" from the kernel
// becomes "00000000:19:00.0"); the text as it is where it does not parse.
std::string normal_bus(const std::string& text) {
    return gpu::normal_pci_bus_id(text).value_or(text);
}

std::string lower(std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

// The kernel's GPUs (kernel_gpus), by bus id; nullopt where the folder cannot be read.
std::optional<std::vector<Seen>> kernel_seen(const DoctorContext& ctx) {
    const auto listed = kernel_gpus(ctx);
    if (!listed) return std::nullopt;
    std::vector<Seen> gpus;
    for (const KernelGpu& g : *listed) gpus.push_back(Seen{normal_bus(g.bus), lower(g.uuid)});
    std::sort(gpus.begin(), gpus.end(), [](const Seen& a, const Seen& b) { return a.bus < b.bus; });
    return gpus;
}

// Whether `gpu` is among `list`, by UUID where both have one, else by bus id.
bool among(const Seen& gpu, const std::vector<Seen>& list) {
    return std::any_of(list.begin(), list.end(), [&](const Seen& s) {
        if (!gpu.uuid.empty() && !s.uuid.empty()) return lower(gpu.uuid) == lower(s.uuid);
        return !gpu.bus.empty() && gpu.bus == s.bus;
    });
}

std::string name_of(const Seen& s) {
    return s.bus.empty() ? s.uuid : s.bus;
}

std::vector<SeenGpu> seen_evidence(const std::vector<Seen>& list) {
    std::vector<SeenGpu> out;
    for (const Seen& s : list) out.push_back({text_or_none(s.bus), text_or_none(s.uuid)});
    return out;
}

// The GPUs CUDA sees, by bus id and UUID.
std::vector<Seen> cuda_gpus(const DoctorContext& ctx) {
    std::vector<Seen> cuda;
    for (int i = 0; i < ctx.device_count; ++i) {
        const gpu::DeviceIdentity id = gpu::device_identity(ctx.driver->api(), i, nullptr);
        cuda.push_back(Seen{id.pci_bus_id, lower(id.uuid)});
    }
    return cuda;
}

// NVML's GPUs by UUID; their bus ids where the kernel names the same UUID. nullopt without NVML.
std::optional<std::vector<Seen>> nvml_gpus(const DoctorContext& ctx, const std::optional<std::vector<Seen>>& kernel) {
    if (ctx.nvml == nullptr || !ctx.nvml->loaded()) return std::nullopt;
    std::vector<Seen> nvml;
    for (const std::string& uuid : ctx.nvml->uuids()) {
        Seen s{{}, lower(uuid)};
        for (const Seen& k : kernel.value_or(std::vector<Seen>{})) {
            if (k.uuid == s.uuid) s.bus = k.bus;
        }
        nvml.push_back(std::move(s));
    }
    return nvml;
}

// The GPUs another source lists that CUDA does not see (CUDA_VISIBLE_DEVICES hides some by design), each
// named with the sources that list it: "00000000:3B:00.0 (listed by NVML and the kernel)".
struct Missing {
    std::vector<Seen> gpus;
    std::vector<std::string> names;
};

Missing missing_from_cuda(const std::vector<Seen>& cuda, const std::optional<std::vector<Seen>>& kernel,
                          const std::optional<std::vector<Seen>>& nvml) {
    Missing missing;
    for (const std::optional<std::vector<Seen>>* source : {&kernel, &nvml}) {
        if (!*source) continue;
        for (const Seen& s : **source) {
            if (among(s, cuda) || among(s, missing.gpus)) continue;
            missing.gpus.push_back(s);
            const bool in_kernel = kernel && among(s, *kernel);
            const bool in_nvml = nvml && among(s, *nvml);
            const char* where = in_kernel && in_nvml ? "NVML and the kernel" : in_kernel ? "the kernel" : "NVML";
            missing.names.push_back(fmt::format("{} (listed by {})", name_of(s), where));
        }
    }
    return missing;
}

// How many GPUs each source lists, for the reason: "CUDA 3, NVML 4, kernel 4".
std::string counted_sources(const std::vector<Seen>& cuda, const std::optional<std::vector<Seen>>& nvml,
                            const std::optional<std::vector<Seen>>& kernel) {
    std::vector<std::string> sources{fmt::format("CUDA {}", cuda.size())};
    sources.push_back(nvml ? fmt::format("NVML {}", nvml->size()) : "no NVML");
    sources.push_back(kernel ? fmt::format("kernel {}", kernel->size()) : "no /proc/driver/nvidia/gpus");
    return fmt::format("{}", fmt::join(sources, ", "));
}

// What --expect-gpus and --expect-driver find otherwise than expected: each a failure.
std::vector<std::string> unexpected(const DoctorContext& ctx, const std::string& driver_version) {
    std::vector<std::string> problems;
    const auto& opts = ctx.options;
    if (opts.expect_gpus && *opts.expect_gpus != ctx.device_count) {
        problems.push_back(fmt::format("CUDA sees {} GPU{}, {} expected", ctx.device_count,
                                       ctx.device_count == 1 ? "" : "s", *opts.expect_gpus));
    }
    if (!opts.expect_driver.empty() && driver_version != opts.expect_driver) {
        problems.push_back(fmt::format("driver {} expected, {} found", opts.expect_driver,
                                       driver_version.empty() ? "no version" : driver_version));
    }
    return problems;
}

constexpr const char* kExpectationRemedy =
    "check that the node has the GPUs and the driver it should (nvidia-smi); a GPU that fell off the bus needs the "
    "node drained and rebooted, a wrong driver reinstalling";
constexpr const char* kMissingRemedy =
    "a GPU that NVML or the kernel lists and CUDA does not has fallen off CUDA's view (see dmesg | grep -i -e xid -e "
    "nvrm): drain the node, reset the GPU (nvidia-smi -r) or reboot; if it returns, replace it";

}  // namespace

CheckOutcome check_inventory(DoctorContext& ctx, DeviceState*) {
    ctx.ensure_initialised();
    if (!ctx.driver_ready()) return CheckOutcome::skip("the driver did not load or initialise (see the driver check)");
    const std::vector<Seen> cuda = cuda_gpus(ctx);
    const auto kernel = kernel_seen(ctx);
    const auto nvml = nvml_gpus(ctx, kernel);
    const Missing missing = missing_from_cuda(cuda, kernel, nvml);
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    const std::string driver_version = doctor::driver_version(ctx, ctx.nvml);
    InventoryEvidence details{
        seen_evidence(cuda), std::nullopt, std::nullopt, seen_evidence(missing.gpus), text_or_none(driver_version), {}};
    if (nvml) details.nvml = seen_evidence(*nvml);
    if (kernel) details.kernel = seen_evidence(*kernel);
    if (visible != nullptr) details.cuda_visible_devices = visible;
    const std::string counted = counted_sources(cuda, nvml, kernel);
    // Missing GPUs are a warning, unless CUDA_VISIBLE_DEVICES hides them by design; an expectation not met
    // is a failure.
    const bool missing_named = !missing.gpus.empty() && visible == nullptr;
    std::vector<std::string> problems = unexpected(ctx, driver_version);
    const bool failed = !problems.empty();
    if (missing_named) {
        problems.insert(problems.begin(),
                        fmt::format("{} GPU{} missing from CUDA's view: {}", missing.gpus.size(),
                                    missing.gpus.size() == 1 ? "" : "s", fmt::join(missing.names, ", ")));
    }
    if (problems.empty()) {
        if (missing.gpus.empty())
            return CheckOutcome::pass(counted + ": every GPU is in CUDA's view", std::move(details));
        return CheckOutcome::pass(
            fmt::format("{}: {} more hidden by CUDA_VISIBLE_DEVICES=\"{}\"", counted, missing.gpus.size(), visible),
            std::move(details));
    }
    const std::string reason = fmt::format("{} ({})", fmt::join(problems, "; "), counted);
    const char* remedy = missing_named ? kMissingRemedy : kExpectationRemedy;
    CheckOutcome o = failed ? CheckOutcome::fail(reason, remedy, std::move(details))
                            : CheckOutcome::warn(reason, remedy, std::move(details));
    const auto& opts = ctx.options;
    o.brief = missing_named ? fmt::format("GPU {} missing", name_of(missing.gpus.front()))
              : opts.expect_gpus && *opts.expect_gpus != ctx.device_count
                  ? fmt::format("{} GPUs, {} expected", ctx.device_count, *opts.expect_gpus)
                  : fmt::format("driver {} expected", opts.expect_driver);
    return o;
}

}  // namespace cumemctl::doctor
