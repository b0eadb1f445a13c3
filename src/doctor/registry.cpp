#include "doctor/registry.hpp"
#include "base/enum_words.hpp"
#include "base/setting.hpp"
#include "util/comma_list.hpp"

#include "util/suggest.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace cumemctl::doctor {

namespace {

// Constant-initialised: no static initialiser's order can see it half made.
constexpr CheckSpec kCatalogue[] = {
    {kCheckDriver, CheckScope::setup,
     "the CUDA driver library loads and initialises; its CUDA and kernel module versions", check_driver, true},
    {kCheckDevices, CheckScope::setup, "the driver sees at least one CUDA device", check_devices, true},
    {kCheckContext, CheckScope::device, "a context can be made on the device; its free and total memory",
     check_context},
    {kCheckCapabilities, CheckScope::device,
     "the device supports VMM and memory pools; its IPC handle types, fabric and multicast", check_capabilities, true},
    {kCheckMemoryHealth, CheckScope::device,
     "what NVML knows of the device's memory: ECC errors since reset, remapped rows pending or failed",
     check_memory_health, true},
    {kCheckLogicalEndpoints, CheckScope::device,
     "logical endpoints (CUDA 13.3): the device's support and the driver's entry points", check_logical_endpoints},
    {kCheckVmm, CheckScope::device, "one granule through cuMemCreate, mapped, written and checked on the device",
     check_vmm},
    {kCheckPosixFdIpc, CheckScope::device,
     "a VMM allocation exported as a POSIX fd; a second process imports, maps and checks it", check_posix_fd_ipc},
    {kCheckPoolTrim, CheckScope::device,
     "a workload on the default pool, then cuMemPoolTrimTo(0) returns the memory to the device", check_pool_trim},
    {kCheckIpcPool, CheckScope::device,
     "an IPC pool (POSIX fd) and a block of it shared with a second process, which checks the pattern", check_ipc_pool},
    {kCheckHostAlloc, CheckScope::device,
     "host and host-NUMA memory through cuMemCreate, mapped and checked from the device", check_host_alloc},
    {kCheckFabricAlloc, CheckScope::device,
     "fabric-handle memory created and exported (needs an IMEX channel this process can open)", check_fabric_alloc},
    {kCheckFabric, CheckScope::device,
     "the GPU's multi-node NVLink fabric from NVML: state, status, cluster and clique, health; one domain a node",
     check_fabric, true},
    {kCheckImexChannels, CheckScope::node,
     "IMEX channel nodes for fabric handles: present, the right device numbers, owner and mode", check_imex_channels,
     true},
    {kCheckImexDomain, CheckScope::node,
     "where a GPU is attached to a multi-node NVLink fabric: the IMEX service, its node file and its domain",
     check_imex_domain, true},
    {kCheckPeerAccess, CheckScope::node,
     "with several GPUs: every pair cuDeviceCanAccessPeer allows maps and reads the other's memory, timed",
     check_peer_access},
    {kCheckInventory, CheckScope::node,
     "the GPUs CUDA sees against NVML's and the kernel's (by PCI bus id); {expect_gpus}, {expect_driver}",
     check_inventory, true},
    // Last, so that the checks before keep their places in reports that index them.
    {kCheckLocality, CheckScope::device,
     "locality domains (CUDA 13.4): with several, a localized allocation and pool in each, placement confirmed",
     check_locality},
    {kCheckGpudirect, CheckScope::device,
     "GPUDirect RDMA where the node has RDMA devices: a dma-buf export of RDMA-capable cuMemCreate and of "
     "cuMemAlloc "
     "memory, checked and closed, else nvidia_peermem ({quick}: attributes and modules only)",
     check_gpudirect, true},
    {kCheckXid, CheckScope::node,
     "the Xids the driver logged since boot (the kernel's log, root): memory and the GPU's presence, by NVIDIA's "
     "meaning; skipped where the log cannot be read",
     check_xid, true},
    {kCheckPcieLink, CheckScope::device,
     "the PCIe link's width and generation against its maximum, the generation read during a copy ({quick}: "
     "idle), and replays during the check; or the C2C link's state",
     check_pcie_link, true},
    {kCheckNvlink, CheckScope::device,
     "the GPU's NVLink links up (NVML) against its peers': a GPU with fewer up than the others fails; the "
     "GPU->GPU limit is links up x their speed",
     check_nvlink, true},
    {kCheckHostBandwidth, CheckScope::device,
     "a short copy each way between pinned host memory and the device, against the link's limit", check_host_bandwidth},
    {kCheckMemoryBandwidth, CheckScope::device,
     "a short device->device copy, bytes read plus written, against HBM's limit (bus width x clock x 2)",
     check_memory_bandwidth},
};

}  // namespace

std::string check_summary(const CheckSpec& check) {
    const auto flag = [](Setting s) { return command_flag(Command::doctor, s); };
    return fmt::format(fmt::runtime(check.summary), fmt::arg("quick", flag(Setting::quick)),
                       fmt::arg("expect_gpus", flag(Setting::expect_gpus)),
                       fmt::arg("expect_driver", flag(Setting::expect_driver)));
}

const std::vector<CheckSpec>& check_catalogue() {
    static const std::vector<CheckSpec> checks(std::begin(kCatalogue), std::end(kCatalogue));
    return checks;
}

std::vector<std::string> quick_check_ids() {
    std::vector<std::string> ids;
    for (const auto& c : check_catalogue()) {
        if (c.quick) ids.emplace_back(c.id);
    }
    return ids;
}

void require_quick(const std::vector<std::string>& ids) {
    const auto quick = quick_check_ids();
    for (const auto& id : ids) {
        if (std::find(quick.begin(), quick.end(), id) != quick.end()) continue;
        const std::string quick_name = setting_name(Setting::quick);
        throw Error(
            ExitCode::usage, fmt::format("check '{}' is not part of {}: it needs a context", id, quick_name),
            fmt::format("{} runs {}; leave out {} to run '{}'", quick_name, fmt::join(quick, ", "), quick_name, id));
    }
}

std::vector<std::string> parse_check_list(std::string_view text) {
    const auto& catalogue = check_catalogue();
    std::vector<std::string> names;
    for (const auto& c : catalogue) names.emplace_back(c.id);
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    if (text == "all") return names;
    std::vector<bool> wanted(catalogue.size(), false);
    for (std::string_view item : split_commas(text)) {
        // "driver, devices" as a person types it: blanks around a name are no part of it.
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
        const auto it = std::find(names.begin(), names.end(), item);
        if (it == names.end()) {
            throw Error(ExitCode::usage,
                        item.empty() ? fmt::format("invalid check list '{}': an empty name", text)
                                     : fmt::format("unknown check '{}'{}", item, did_you_mean(item, names)),
                        fmt::format("the checks are: {} (or all); 'cumemctl {}' describes them", fmt::join(names, ", "),
                                    command_line(Command::doctor, {{Setting::list_checks}})));
        }
        wanted[static_cast<std::size_t>(it - names.begin())] = true;
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (wanted[i]) out.push_back(names[i]);
    }
    return out;
}

namespace {

constexpr auto kScopeWords = enum_words<CheckScope>(
    {{CheckScope::setup, "setup"}, {CheckScope::device, "device"}, {CheckScope::node, "node"}}, "node");

}  // namespace

std::string_view scope_name(CheckScope scope) {
    return kScopeWords.word(scope);
}

}  // namespace cumemctl::doctor
