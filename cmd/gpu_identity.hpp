// A GPU as operators name it, in the results of the commands that work on devices: the UUID, the PCI
// bus id and NVML's (nvidia-smi's) index beside the CUDA ordinal, in the JSON (gpu::identity_json, as
// devices and doctor write them) and as one line per GPU below a table, so that rows get no wider.
#pragma once

#include <future>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "gpu/device/device_selector.hpp"
#include "report/report.hpp"

namespace cumemctl::cmd {

// "gpu 0: nvidia3, GPU-5f0a..., PCI 00000000:19:00.0": a GPU as operators name it, nvidia3 (nvidia-smi's
// index) as doctor's drain reason does.
std::string identity_note(const gpu::DeviceIdentity& id);

// NVML, loaded on a thread of its own (open_nvml) while the driver initialises, as the commands that
// name devices load it (doctor, fabric-matrix's ranks and imex-setup --verify's child load their own);
// shared, so that --device's nvidiaN (gpu::DeviceList::select), the identities and the command's own
// NVML figures wait for one load.
using NvmlLoad = std::shared_future<nvml::Library>;
NvmlLoad load_nvml_for_identities(const Globals& globals);

// The identities of `ordinals`, with NVML's index from `nvml_load` (its warning, where --libnvml named
// a library that did not load, goes to `report`).
std::vector<gpu::DeviceIdentity> identities_of(Report& report, const Globals& globals, const DriverApi& api,
                                               const NvmlLoad& nvml_load, const std::vector<int>& ordinals);

// Adds "uuid", "pci_bus_id" and "nvml_index" of `id` to a device's JSON object (which names the
// ordinal under a key of its own).
void add_identity(nlohmann::json& j, const gpu::DeviceIdentity& id);

// The identity of `ordinal` among `ids` (one with only the ordinal where it is not there).
gpu::DeviceIdentity identity_in(const std::vector<gpu::DeviceIdentity>& ids, int ordinal);

// A line per GPU of `ids` among the table's notes.
void add_identity_notes(Table& table, const std::vector<gpu::DeviceIdentity>& ids);

}  // namespace cumemctl::cmd
