#include "devices_table.hpp"
#include "devices_results.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "devices_fabric.hpp"
#include "devices_locality.hpp"
#include "util/size.hpp"

namespace cumemctl::cmd {
namespace {

using gpu::Capability;
using gpu::capability_catalogue;
using gpu::DeviceInfo;
using gpu::handle_type_names;

TableCell cap_text(const Capability& cap) {
    if (!cap.value) return {"unknown", Tone::attention};
    if (cap.key == "host_numa_id") return std::to_string(*cap.value);
    if (cap.key == "pool_handle_types") {
        const auto names = handle_type_names(*cap.value);
        return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ","));
    }
    if (cap.key == "gpudirect_rdma_flush_writes") {
        const auto names = gpu::flush_option_names(*cap.value);
        return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ","));
    }
    if (cap.key == "gpudirect_rdma_writes_ordering") return gpu::writes_ordering_name(*cap.value);
    return {*cap.value != 0 ? "yes" : "no", tone_of_answer(*cap.value != 0)};
}

// One row per property, one cell per device, in the order of `devices`.
std::vector<std::vector<TableCell>> property_rows(const std::vector<DeviceInfo>& devices) {
    std::vector<std::vector<TableCell>> rows;
    auto row = [&](std::string label, auto cell) {
        std::vector<TableCell> r{std::move(label)};
        for (const auto& d : devices) r.emplace_back(cell(d));
        rows.push_back(std::move(r));
    };
    row("name", [](const DeviceInfo& d) { return d.name; });
    row("compute capability", [](const DeviceInfo& d) { return fmt::format("{}.{}", d.cc_major, d.cc_minor); });
    row("free memory from", [](const DeviceInfo& d) {
        return !d.free_bytes ? std::string("unknown") : d.free_source == "nvml" ? "NVML" : "a context";
    });
    const bool any_nvml = std::any_of(devices.begin(), devices.end(), [](const DeviceInfo& d) { return d.nvml; });
    if (any_nvml) {
        auto size_or = [](const std::optional<std::uint64_t>& v) {
            return v ? format_size(*v) : std::string("unknown");
        };
        row("reserved memory", [&](const DeviceInfo& d) { return d.nvml ? size_or(d.nvml->reserved) : "unknown"; });
        row("BAR1", [&](const DeviceInfo& d) { return d.nvml ? size_or(d.nvml->bar1_total) : "unknown"; });
        row("ECC", [](const DeviceInfo& d) {
            if (!d.nvml || !d.nvml->ecc_enabled) return std::string("unknown");
            if (!*d.nvml->ecc_enabled) return std::string("off");
            return d.nvml->ecc_uncorrected_volatile
                       ? fmt::format("on, {} uncorrectable since reset", *d.nvml->ecc_uncorrected_volatile)
                       : std::string("on");
        });
        row("remapped rows", [](const DeviceInfo& d) {
            if (!d.nvml || !d.nvml->remapped_rows) return std::string("unknown");
            const auto& r = *d.nvml->remapped_rows;
            return fmt::format("{} corr., {} unc.{}{}", r.corrected, r.uncorrected, r.pending ? ", PENDING" : "",
                               r.failure ? ", FAILED" : "");
        });
        auto on_off = [](const std::optional<bool>& v) { return !v ? std::string("unknown") : *v ? "on" : "off"; };
        row("persistence mode",
            [&](const DeviceInfo& d) { return d.nvml ? on_off(d.nvml->persistence_mode) : "unknown"; });
        row("MIG mode", [&](const DeviceInfo& d) { return d.nvml ? on_off(d.nvml->mig_enabled) : "unknown"; });
    }
    for (const auto& r : fabric_rows(devices)) rows.push_back(plain_cells(r));
    for (const auto& r : locality_rows(devices)) rows.push_back(plain_cells(r));
    for (std::size_t i = 0; i < capability_catalogue().size(); ++i) {
        row(std::string(capability_catalogue()[i].label),
            [i](const DeviceInfo& d) { return cap_text(d.capabilities[i]); });
    }
    return rows;
}

// "0-3" or "0,2": the CUDA ordinals of a group of GPUs.
std::string ordinals(const std::vector<int>& gpus) {
    const bool run = gpus.size() > 2 && gpus.back() - gpus.front() + 1 == static_cast<int>(gpus.size());
    return run ? fmt::format("{}-{}", gpus.front(), gpus.back()) : fmt::format("{}", fmt::join(gpus, ","));
}

std::vector<int> all_ordinals(const std::vector<DeviceInfo>& devices) {
    std::vector<int> out;
    for (const auto& d : devices) out.push_back(d.ordinal);
    return out;
}

}  // namespace

const std::vector<DeviceColumn>& device_columns() {
    static const std::vector<DeviceColumn> columns{
        {"gpu", [](const DeviceInfo& d) { return std::to_string(d.ordinal); }},
        {"UUID", [](const DeviceInfo& d) { return d.uuid.empty() ? std::string("unknown") : d.uuid; }},
        {"PCI bus id",
         [](const DeviceInfo& d) { return d.pci_bus_id.empty() ? std::string("unknown") : d.pci_bus_id; }},
        {"index", [](const DeviceInfo& d) { return d.nvml_index ? std::to_string(*d.nvml_index) : std::string("-"); }},
        {"memory", [](const DeviceInfo& d) { return format_size(d.total_bytes); }},
        {"free",
         [](const DeviceInfo& d) { return d.free_bytes ? format_size(*d.free_bytes) : std::string("unknown"); }},
    };
    return columns;
}

// "Devices" (a row per GPU) and "Properties".
std::vector<Table> DevicesResults::tables(const Report&) const {
    if (device_count == 0) return {Table{"Devices", {}, {}, {"no CUDA device is visible on this node"}}};
    Table gpus{"Devices", {}, {}, {}, false};
    for (const auto& c : device_columns()) gpus.columns.push_back(c.header);
    for (const auto& d : devices) {
        std::vector<TableCell> row;
        for (const auto& c : device_columns()) row.emplace_back(c.cell(d));
        gpus.rows.push_back(std::move(row));
    }
    gpus.notes.push_back("gpu: the CUDA ordinal; index: nvidia-smi's (NVML's), the same GPU");
    // The properties, one column per group of GPUs whose every property is the same (one column on a
    // node of one kind of GPU), so that eight GPUs fit as one does.
    const auto rows = property_rows(devices);
    std::vector<std::vector<int>> groups;  // indexes into devices
    for (std::size_t i = 0; i < devices.size(); ++i) {
        auto same = [&](const std::vector<int>& g) {
            return std::all_of(rows.begin(), rows.end(), [&](const auto& r) { return r[1 + i] == r[1 + g.front()]; });
        };
        auto it = std::find_if(groups.begin(), groups.end(), same);
        if (it == groups.end()) {
            groups.push_back({static_cast<int>(i)});
        } else {
            it->push_back(static_cast<int>(i));
        }
    }
    // Properties alike on every GPU once; the others with a column per group.
    Table same{groups.size() > 1 ? "Properties of every GPU" : "Properties",
               {"", fmt::format("gpu {}", ordinals(all_ordinals(devices)))},
               {},
               {},
               false};
    Table differ{"Properties that differ", {""}, {}, {}, false};
    for (const auto& g : groups) {
        std::vector<int> ords;
        for (int i : g) ords.push_back(devices[static_cast<std::size_t>(i)].ordinal);
        differ.columns.push_back(fmt::format("gpu {}", ordinals(ords)));
    }
    for (const auto& r : rows) {
        const bool alike = std::all_of(r.begin() + 1, r.end(), [&](const TableCell& c) { return c == r[1]; });
        if (alike) {
            same.rows.push_back({r[0], r.size() > 1 ? r[1] : TableCell("")});
            continue;
        }
        std::vector<TableCell> row{r[0]};
        for (const auto& g : groups) row.push_back(r[1 + static_cast<std::size_t>(g.front())]);
        differ.rows.push_back(std::move(row));
    }
    std::vector<Table> out{std::move(gpus), std::move(same)};
    if (!differ.rows.empty()) out.push_back(std::move(differ));
    return out;
}

}  // namespace cumemctl::cmd
