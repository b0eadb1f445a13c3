#include "create_pool_results.hpp"

#include <nlohmann/json.hpp>

#include "create_report.hpp"
#include "gpu/device/locality.hpp"
#include "gpu_identity.hpp"
#include "pool_report.hpp"
#include "steps/step_json.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

nlohmann::json result_json(const CreatePoolResult& r) {
    auto attrs = [](const std::optional<PoolAttributes>& a) {
        return a ? attributes_json(*a) : nlohmann::json(nullptr);
    };
    nlohmann::json j{{"pool", pool_info_json(r.pool)},         {"size_bytes", r.size},
                     {"after_alloc", attrs(r.after_alloc)},    {"after_free", attrs(r.after_free)},
                     {"steps", steps_json(r.outcome.steps())}, {"ok", r.outcome.passed()}};
    j["access"] = access_json(r.access);
    j["checks"] = device_checks_json(r.checks);
    j["ipc_check"] = r.ipc_checked ? nlohmann::json{{"passed", r.outcome.passed()}} : nlohmann::json(nullptr);
    j["resources"] = r.before ? resources_json(*r.before, r.after, r.outcome.steps()) : nlohmann::json(nullptr);
    if (is_localized(r.pool.location)) {
        auto placement = [](const std::optional<Placement>& p) {
            return p ? placement_json(*p) : nlohmann::json(nullptr);
        };
        j["placement"] = {{"pool", placement(r.pool_placement)},
                          {"block", placement(r.block_placement)},
                          {"pool_location_read_back",
                           r.pool_location ? decoded_location_json(*r.pool_location) : nlohmann::json(nullptr)}};
    }
    return j;
}

}  // namespace

nlohmann::json CreatePoolResults::to_json() const {
    nlohmann::json list = nlohmann::json::array();
    for (const DevicePoolCreate& d : devices) {
        nlohmann::json j = result_json(d.result);
        j["ordinal"] = d.id.ordinal;
        add_identity(j, d.id);
        list.push_back(std::move(j));
    }
    return {{"statistics_scope", "process"}, {"devices", std::move(list)}};
}

}  // namespace cumemctl::cmd
