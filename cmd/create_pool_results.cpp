#include "create_pool_results.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "create_report.hpp"
#include "gpu/device/locality.hpp"
#include "gpu_identity.hpp"
#include "pool_report.hpp"
#include "steps/step_json.hpp"
#include "util/size.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

// A pool's table and its steps' on GPU `device`.
std::vector<Table> result_tables(int device, const CreatePoolResult& r) {
    Table pool{fmt::format("Pool on GPU {}", device), {"property", "value"}, {}, {kPerProcessNote}};
    pool.rows = {{"location", pool_location_name(r.pool.location)},
                 {"handle types", handle_types_text(r.pool)},
                 {"max size", max_size_text(r.pool)},
                 {"block", format_size(r.size)}};
    if (r.after_alloc) {
        pool.rows.push_back({"reserved with the block", format_size(r.after_alloc->reserved_current)});
        pool.rows.push_back({"used with the block", format_size(r.after_alloc->used_current)});
    }
    if (r.after_free) pool.rows.push_back({"reserved after the free", format_size(r.after_free->reserved_current)});
    if (r.pool_placement) pool.rows.push_back({"pool placement", placement_text(*r.pool_placement)});
    if (r.block_placement) pool.rows.push_back({"block placement", placement_text(*r.block_placement)});
    add_access_rows(pool, r.access, r.checks);
    if (r.ipc_checked)
        pool.rows.push_back({"IPC check", {r.outcome.passed() ? "pass" : "fail", tone_of_answer(r.outcome.passed())}});
    if (r.before && r.after) {
        pool.rows.push_back({"descriptors and handles after",
                             compare(*r.before, *r.after).balanced() ? "as before" : "different (see the warning)"});
        pool.rows.push_back({"device free memory", fmt::format("{} before, {} after ({})", r.before->free_bytes,
                                                               r.after->free_bytes, kDeviceFreeScope)});
    }
    return {std::move(pool), steps_table(fmt::format("Steps on GPU {}", device), r.outcome.steps())};
}

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

std::vector<Table> CreatePoolResults::tables(const Report& /*report*/) const {
    std::vector<Table> tables;
    for (const DevicePoolCreate& d : devices) {
        for (auto& t : result_tables(d.id.ordinal, d.result)) tables.push_back(std::move(t));
        tables.back().notes.push_back(identity_note(d.id));
    }
    return tables;
}

}  // namespace cumemctl::cmd
