// create's report: its CreateResult as typed results (CreateResults, which draw the tables), with
// warnings for what was asked and not granted and for resources that differ before and after.
#pragma once

#include <optional>
#include <vector>

#include "gpu/device/device_selector.hpp"
#include "gpu/device/peer_access.hpp"
#include "gpu/vmm/resource_snapshot.hpp"
#include "gpu/vmm/vmm_create.hpp"
#include "report/report.hpp"

namespace cumemctl::cmd {

// Sets the report's results to what create did (also after a failure; CreateResults::tables draws the
// tables), and adds warnings: compression asked for and not granted; descriptors that differ or
// releases that failed.
// `id` names the device beside its ordinal.
void fill_create_report(Report& report, const gpu::CreateRequest& request, const gpu::CreateResult& result,
                        const gpu::DeviceIdentity& id);

// Device free memory (device-wide, labelled so: shown, not judged) and this process's descriptors before
// and after (after null where it was not taken), their deltas, the new descriptors, the release calls of
// `steps` the driver refused (failed_releases), the handles no guard could give back
// (handles_not_released) and whether everything this process made was given back (balanced); create
// and create --pool report these.
nlohmann::json resources_json(const gpu::ResourceSnapshot& before, const std::optional<gpu::ResourceSnapshot>& after,
                              const std::vector<steps::Step>& steps);

// Each device's access ([{"device", "access", "peer"}]) and the checks from other devices
// ([{"device", and the verify result's fields}]), for create --access and create --pool --access.
nlohmann::json access_json(const std::vector<gpu::DeviceAccess>& access);
nlohmann::json device_checks_json(const std::vector<gpu::DeviceCheck>& checks);

// Table rows for the same: "access" (one line) and "check from GPU N" per check.
void add_access_rows(Table& table, const std::vector<gpu::DeviceAccess>& access,
                     const std::vector<gpu::DeviceCheck>& checks);

// Warns when this process's descriptors differ after an operation on `device`, or a handle it made was
// not given back (the refused release calls of `steps` named). Device free memory never warns.
void warn_unbalanced(Report& report, const gpu::ResourceSnapshot& before, const gpu::ResourceSnapshot& after,
                     const std::vector<steps::Step>& steps, int device);

}  // namespace cumemctl::cmd
