#include "trim_results.hpp"

#include <nlohmann/json.hpp>

#include "gpu_identity.hpp"
#include "pool_report.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

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

}  // namespace cumemctl::cmd
