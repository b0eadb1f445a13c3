#include "granularity_results.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpu/device/devices.hpp"
#include "gpu_identity.hpp"
#include "report/report.hpp"
#include "util/size.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

std::string flags_text(const MemoryRequest& r) {
    const auto names = flag_names(r);
    return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, "+"));
}

// The location a row names: the driver's where it was resolved, else as asked ("domain:1").
std::string granularity_location_text(const GranularityRow& row) {
    return row.location ? location_name(*row.location) : location_spec_name(row.request.location);
}

// Why a row has no answer, in one cell: the driver's error name and the cause.
std::string why_text(const GranularityRow& row) {
    if (row.status == GranularityRow::Status::ok) return "";
    const Problem& p = *row.problem;
    const std::string what = p.cause.empty() ? p.message : p.cause;
    return p.driver ? fmt::format("{}: {}", p.driver->name, what) : what;
}

Table rows_table(const std::vector<GranularityAnswer>& answers, const std::optional<std::uint64_t>& size) {
    Table t;
    t.title = "Allocation granularity";
    t.columns = {"GPU", "location", "handle type", "flags", "minimum", "recommended"};
    if (size) {
        t.columns.push_back("size to min");
        t.columns.push_back("size to rec");
        t.notes.push_back(fmt::format("size {} bytes ({}), rounded up to each granularity", *size, format_size(*size)));
    }
    t.columns.insert(t.columns.end(), {"status", "why"});
    t.wrap_last = true;  // the notes: each reason wraps to the width, its number in the rows
    std::vector<std::string> reasons;
    for (const GranularityAnswer& answer : answers) {
        const GranularityRow& row = answer.row;
        const bool ok = row.status == GranularityRow::Status::ok;
        std::vector<TableCell> cells{std::to_string(row.device),
                                     granularity_location_text(row),
                                     handle_type_name(row.request.handle_type),
                                     flags_text(row.request),
                                     ok ? format_size(row.granularity.minimum) : "-",
                                     ok ? format_size(row.granularity.recommended) : "-"};
        if (size) {
            cells.push_back(answer.rounded ? format_size(answer.rounded->to_minimum) : "-");
            cells.push_back(answer.rounded ? format_size(answer.rounded->to_recommended) : "-");
        }
        const Tone tone = ok ? Tone::good : row.status == GranularityRow::Status::refused ? Tone::bad : Tone::plain;
        cells.push_back({granularity_status_name(row.status), tone});
        // Each distinct reason once, below the table, and its number in the row: the same refusal
        // repeats across devices and flags, and rows stay short.
        // The general cause, before the properties that the row's own cells already name.
        std::string why = why_text(row);
        if (const auto colon = why.find(": ", why.find(": ") + 1); colon != std::string::npos) why.resize(colon);
        if (!why.empty()) {
            auto it = std::find(reasons.begin(), reasons.end(), why);
            if (it == reasons.end()) it = reasons.insert(reasons.end(), why);
            cells.push_back(fmt::format("[{}]", it - reasons.begin() + 1));
        } else {
            cells.emplace_back();
        }
        t.rows.push_back(std::move(cells));
    }
    if (!reasons.empty()) t.notes.emplace_back("");
    for (std::size_t i = 0; i < reasons.size(); ++i) t.notes.push_back(fmt::format("[{}] {}", i + 1, reasons[i]));
    return t;
}

nlohmann::json row_json(const GranularityAnswer& answer, const std::vector<DeviceIdentity>& ids) {
    const GranularityRow& row = answer.row;
    nlohmann::json j{{"device", row.device}};
    add_identity(j, identity_in(ids, row.device));
    j.update({{"location", granularity_location_text(row)},
              {"handle_type", handle_type_name(row.request.handle_type)},
              {"flags", flag_names(row.request)},
              {"status", granularity_status_name(row.status)}});
    if (row.status == GranularityRow::Status::ok) {
        j["minimum_bytes"] = row.granularity.minimum;
        j["recommended_bytes"] = row.granularity.recommended;
        if (answer.rounded) {
            j["size_rounded_to_minimum_bytes"] = answer.rounded->to_minimum;
            j["size_rounded_to_recommended_bytes"] = answer.rounded->to_recommended;
        }
    } else {
        j["minimum_bytes"] = nullptr;
        j["recommended_bytes"] = nullptr;
        j["problem"] = cumemctl::to_json(*row.problem);
    }
    return j;
}

}  // namespace

nlohmann::json GranularityResults::to_json() const {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& answer : rows) list.push_back(row_json(answer, ids));
    nlohmann::json j{{"device_count", device_count}, {"rows", std::move(list)}};
    if (size) j["size_bytes"] = *size;
    return j;
}

std::vector<Table> GranularityResults::tables(const Report& /*report*/) const {
    if (device_count == 0) return {Table{"Allocation granularity", {}, {}, {"no CUDA device is visible on this node"}}};
    Table t = rows_table(rows, size);
    if (each_flag_alone) {
        t.notes.push_back(
            "flags: none and each flag alone; give several of --compression, --rdma, --tile-pool for that "
            "combination");
    }
    t.notes.emplace_back("");
    add_identity_notes(t, ids);
    return {t};
}

}  // namespace cumemctl::cmd
