#include "pool_stats_results.hpp"

#include <nlohmann/json.hpp>

#include "gpu_identity.hpp"
#include "pool_report.hpp"
#include "report/report.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

nlohmann::json pool_json(const PoolInfo& info, const PoolAttributes& attributes) {
    nlohmann::json j = pool_info_json(info);
    j["attributes"] = attributes_json(attributes);
    return j;
}

nlohmann::json location_json(const LocationPools& l) {
    nlohmann::json j{{"location", pool_location_name(l.location)},
                     {"allocation_type", alloc_type_name(l.alloc_type)},
                     {"available", !l.unavailable}};
    if (l.unavailable) {
        j["reason"] = cumemctl::to_json(*l.unavailable);
        return j;
    }
    j["default"] = pool_json(*l.default_pool, *l.default_attributes);
    j["current"] = pool_json(*l.current_pool, *l.current_attributes);
    j["current_is_default"] = l.current_is_default;
    return j;
}

nlohmann::json made_current_json(const MadeCurrent& m) {
    nlohmann::json j{{"now_current", m.now_current}};
    if (m.draw) {
        const CurrentPoolDraw& d = *m.draw;
        j["draw"] = {{"size_bytes", d.size},
                     {"new_pool_used_before_bytes", d.new_used_before},
                     {"new_pool_used_during_bytes", d.new_used_during},
                     {"default_pool_used_before_bytes", d.default_used_before},
                     {"default_pool_used_during_bytes", d.default_used_during},
                     {"drew_from_new", d.drew_from_new()}};
    }
    return j;
}

nlohmann::json selected_json(const SelectedPool& s) {
    nlohmann::json j = pool_info_json(s.pool);
    j["pool"] = pool_choice_name(s.choice);
    j["attributes_at_start"] = attributes_json(s.at_start);
    if (s.placement) j["placement"] = placement_json(*s.placement);
    if (s.pattern && s.exercise) j["exercise"] = workload_json(*s.pattern, *s.exercise);
    if (s.made_current) j["make_current"] = made_current_json(*s.made_current);
    j["attributes"] = attributes_json(s.at_end);
    j["high_water_marks_reset"] = s.high_water_marks_reset;
    return j;
}

nlohmann::json device_pools_json(const DevicePools& d) {
    nlohmann::json j{{"ordinal", d.id.ordinal}};
    add_identity(j, d.id);
    j.update({{"name", d.name}, {"pools", nlohmann::json::array()}});
    for (const auto& l : d.pools) j["pools"].push_back(location_json(l));
    if (d.selected) j["selected"] = selected_json(*d.selected);
    return j;
}

}  // namespace

nlohmann::json PoolStatsResults::to_json() const {
    nlohmann::json list = nlohmann::json::array();
    for (const DevicePools& d : devices) list.push_back(device_pools_json(d));
    return {{"statistics_scope", "process"}, {"statistics_note", kPerProcessNote}, {"devices", std::move(list)}};
}

}  // namespace cumemctl::cmd
