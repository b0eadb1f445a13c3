#include "le_bind_results.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/setting.hpp"
#include "cuda/driver.hpp"
#include "cuda/driver_info.hpp"
#include "gpu_identity.hpp"
#include "steps/step_json.hpp"
#include "util/duration.hpp"
#include "util/size.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

std::string ms(double seconds) {
    return format_duration(seconds);
}

Table summary_table(const LeBindRequest& r, const LeBindOutcome& o) {
    Table t{"Logical endpoint", {"", "value"}, {}, {}};
    t.wrap_last = true;
    auto row = [&](std::string k, std::string v) { t.rows.push_back({std::move(k), std::move(v)}); };
    row("driver", o.support.message);
    if (o.support.lookup) {
        row("lookup",
            fmt::format("cuGetProcAddress(\"{}\", {}): {}, {}", o.support.lookup->name, o.support.lookup->version,
                        o.support.lookup_result, proc_status_name(o.support.lookup->status)));
    }
    if (!o.support.available) return t;
    row("type", fmt::format("{} on device{} {}", r.multicast ? "multicast" : "unicast",
                            r.devices.size() == 1 ? "" : "s", fmt::join(r.devices, ",")));
    row("endpoint size", format_size(r.size));
    if (o.limits) {
        row("bind alignment", format_size(o.limits->bind_alignment));
        row("max size", format_size(o.limits->max_size));
    }
    if (o.violation) t.rows.push_back({{"refused", Tone::bad}, o.violation->message});
    if (o.id) row("endpoint id", std::to_string(*o.id));
    if (o.query)
        row("construction", fmt::format("{} after {} polls in {}", o.query->constructed ? "complete" : "incomplete",
                                        o.query->polls, ms(o.query->waited_seconds)));
    if (o.exported) row("fabric export", o.import_query ? "exported and re-imported" : "exported");
    for (const auto& b : o.bindings) {
        row(fmt::format("binding on device {}", b.device),
            fmt::format("{} of {} memory at offset {} from mem offset {}{}", format_size(o.plan->bind_size), b.location,
                        format_size(o.plan->offset), format_size(o.plan->mem_offset), b.bound ? "" : " (not bound)"));
    }
    return t;
}

Table le_steps_table(const LeBindOutcome& o) {
    Table t = steps_table("Steps", o.steps);
    if (o.completed && !o.steps.empty()) t.notes.push_back("everything made was undone");
    return t;
}

nlohmann::json support_json(const LeDriverSupport& s) {
    nlohmann::json j{{"available", s.available},
                     {"driver_version", s.driver_version},
                     {"driver_version_string", cuda_version_string(s.driver_version)},
                     {"needs_version", le::kVersion},
                     {"message", s.message},
                     {"lookup", nullptr}};
    if (s.lookup) {
        j["lookup"] = {{"entry_point", std::string(s.lookup->name)},
                       {"version", s.lookup->version},
                       {"result", s.lookup_result},
                       {"status", proc_status_name(s.lookup->status)},
                       {"found", s.lookup->found}};
    }
    return j;
}

nlohmann::json request_json(const LeBindRequest& r) {
    nlohmann::json j{{"type", r.multicast ? "multicast" : "unicast"},
                     {"devices", r.devices},
                     {"size_bytes", r.size},
                     {"offset_bytes", r.offset},
                     {"mem_offset_bytes", r.mem_offset},
                     {"location", r.location.type == CU_MEM_LOCATION_TYPE_DEVICE ? "device" : "host-numa"},
                     {"handle_type", r.fabric ? "fabric" : "none"},
                     {"counted_ops", r.counted_ops},
                     {"by_address", r.by_address},
                     {"limits_only", r.limits_only},
                     {"timeout_seconds", r.timeout_seconds}};
    j["bind_size_bytes"] = r.bind_size ? nlohmann::json(*r.bind_size) : nlohmann::json(nullptr);
    if (r.location.numa_node) j["location"] = fmt::format("host-numa:{}", *r.location.numa_node);
    return j;
}

nlohmann::json wait_json(const std::optional<LeQueryWait>& w) {
    if (!w) return nullptr;
    return {{"constructed", w->constructed}, {"polls", w->polls}, {"waited_seconds", w->waited_seconds}};
}

nlohmann::json outcome_json(const LeBindRequest& r, const LeBindOutcome& o) {
    nlohmann::json j{{"logical_endpoints", support_json(o.support)}, {"request", request_json(r)}};
    j["limits"] = o.limits ? nlohmann::json{{"bind_alignment_bytes", o.limits->bind_alignment},
                                            {"max_size_bytes", o.limits->max_size}}
                           : nlohmann::json(nullptr);
    j["violation"] = nullptr;
    if (o.violation) {
        nlohmann::json nearest = nlohmann::json::array();
        for (const auto& s : o.violation->nearest)
            nearest.push_back({{"option", setting_name(s.property)}, {"value_bytes", s.value}});
        j["violation"] = {{"message", o.violation->message}, {"nearest", nearest}};
    }
    j["endpoint"] = nullptr;
    if (o.id) {
        j["endpoint"] = {{"id", *o.id},
                         {"query", wait_json(o.query)},
                         {"exported", o.exported},
                         {"import_query", wait_json(o.import_query)}};
    }
    j["memory"] = o.plan ? nlohmann::json{{"granularity_bytes", o.granularity},
                                          {"allocation_size_bytes", o.plan->allocation_size}}
                         : nlohmann::json(nullptr);
    nlohmann::json binds = nlohmann::json::array();
    for (const auto& b : o.bindings) {
        binds.push_back({{"device", b.device},
                         {"location", b.location},
                         {"offset_bytes", o.plan->offset},
                         {"mem_offset_bytes", o.plan->mem_offset},
                         {"size_bytes", o.plan->bind_size},
                         {"method", r.by_address ? "address" : "handle"},
                         {"bound", b.bound}});
    }
    j["bindings"] = binds;
    j["steps"] = steps_json(o.steps);
    j["completed"] = o.completed;
    return j;
}

}  // namespace

nlohmann::json LeBindResults::to_json() const {
    nlohmann::json j = outcome_json(request, outcome);
    j["gpus"] = nlohmann::json::array();
    for (const auto& id : gpus) j["gpus"].push_back(identity_json(id));
    return j;
}

std::vector<Table> LeBindResults::tables(const Report& /*report*/) const {
    std::vector<Table> tables{summary_table(request, outcome)};
    add_identity_notes(tables.back(), gpus);
    if (!outcome.steps.empty()) tables.push_back(le_steps_table(outcome));
    return tables;
}

}  // namespace cumemctl::cmd
