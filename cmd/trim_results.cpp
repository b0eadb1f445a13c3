#include "trim_results.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpu/vmm/resource_snapshot.hpp"
#include "gpu_identity.hpp"
#include "pool_report.hpp"
#include "util/duration.hpp"
#include "util/size.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

// The pool before and after the trim on GPU `device`, and the verdict.
Table trim_table(int device, const TrimResult& r) {
    const TrimFigures& f = r.figures;
    Table t{fmt::format("Trim on GPU {} (keep {})", device, format_size(f.keep)),
            {"", "before trim", "after trim"},
            {},
            {}};
    t.rows = {{"pool reserved", format_size(f.reserved_before), format_size(f.reserved_after)},
              {"device free (device-wide)", format_size(f.free_before_trim), format_size(f.free_after_trim)},
              {"device free at start (device-wide)", format_size(f.free_at_start), ""},
              {"cuMemPoolTrimTo", "", format_duration(r.trim_seconds)},
              {"memory returned", "", {r.verdict.returned ? "pass" : "fail", tone_of_answer(r.verdict.returned)}}};
    t.notes = {r.verdict.reason, kPerProcessNote, fmt::format("device free memory is {}", kDeviceFreeScope)};
    t.wrap_last = true;  // the notes wrap to the width
    return t;
}

nlohmann::json trim_json(const PoolInfo& pool, const WorkloadPattern& pattern, const TrimResult& r) {
    nlohmann::json j = to_json(r.figures);
    j["pool"] = pool_info_json(pool);
    j["exercise"] = workload_json(pattern, r.workload);
    j["trim_seconds"] = r.trim_seconds;
    j["returned"] = r.verdict.returned;
    j["reason"] = r.verdict.reason;
    return j;
}

}  // namespace

nlohmann::json TrimResults::to_json() const {
    nlohmann::json list = nlohmann::json::array();
    for (const DeviceTrim& d : devices) {
        nlohmann::json j = trim_json(d.pool, d.workload, d.result);
        j["ordinal"] = d.id.ordinal;
        add_identity(j, d.id);
        list.push_back(std::move(j));
    }
    return {{"statistics_scope", "process"}, {"devices", std::move(list)}};
}

std::vector<Table> TrimResults::tables(const Report& /*report*/) const {
    std::vector<Table> tables;
    for (const DeviceTrim& d : devices) {
        tables.push_back(trim_table(d.id.ordinal, d.result));
        tables.back().notes.push_back(identity_note(d.id));
    }
    return tables;
}

}  // namespace cumemctl::cmd
