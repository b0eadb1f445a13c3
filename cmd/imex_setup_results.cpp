#include "imex_setup_results.hpp"

#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/json_fields.hpp"
#include "steps/step_json.hpp"
#include "util/file_mode.hpp"
#include "util/size.hpp"

namespace cumemctl::cmd {
using namespace gpu;
using namespace imex;
namespace {

nlohmann::json owner_json(const Owner& owner) {
    return {{"uid", owner.uid}, {"gid", owner.gid}, {"user", owner.user}, {"group", owner.group}};
}

nlohmann::json node_state_json(const NodeState& s) {
    nlohmann::json j{{"type", node_kind_key(s.kind)}};
    if (s.kind == NodeKind::missing) return j;
    if (s.kind == NodeKind::char_device || s.kind == NodeKind::block_device)
        j["device"] = format_device(s.major, s.minor);
    j["uid"] = s.uid;
    j["gid"] = s.gid;
    j["mode"] = format_mode(s.mode);
    return j;
}

// A channel's detail for people: its error, or its plan (naming imex-setup's options).
std::string channel_detail(const ChannelOutcome& c) {
    return c.action == Action::error ? c.error : c.plan.detail;
}

nlohmann::json channel_json(const ImexSetupResult& r, const ChannelOutcome& c) {
    nlohmann::json j{{"channel", c.want.channel},
                     {"path", fmt::format("{}/{}", r.directory.path, channel_name(c.want.channel))},
                     {"device", format_device(c.want.major, c.want.channel_minor())},
                     {"uid", c.want.uid},
                     {"gid", c.want.gid},
                     {"owner", format_owner(r.owner)},
                     {"mode", format_mode(c.want.mode)},
                     {"action", action_name(c.action)},
                     {"change", change_name(c.plan.change)},
                     {"detail", text_or_null(channel_detail(c))},
                     {"found", node_state_json(c.found)}};
    return j;
}

nlohmann::json setup_json(const ImexSetupRequest& req, const ImexSetupResult& r) {
    nlohmann::json channels = nlohmann::json::array();
    nlohmann::json summary = nlohmann::json::object();
    for (Action a : {Action::created, Action::unchanged, Action::kept, Action::fixed, Action::replaced, Action::removed,
                     Action::planned, Action::refused, Action::error}) {
        summary[std::string(action_name(a))] = 0;
    }
    for (const auto& c : r.channels) {
        channels.push_back(channel_json(r, c));
        summary[std::string(action_name(c.action))] = summary[std::string(action_name(c.action))].get<int>() + 1;
    }
    nlohmann::json dir{
        {"path", r.directory.path}, {"action", action_name(r.directory.action)}, {"exists", r.directory.exists}};
    if (r.directory.exists) {
        dir["uid"] = r.directory.state.uid;
        dir["gid"] = r.directory.state.gid;
        dir["mode"] = format_mode(r.directory.state.mode);
    }
    return {{"operation", req.remove ? "remove" : "provision"},
            {"check", req.check},
            {"dry_run", req.dry_run},
            {"force", req.force},
            {"proc_devices", req.proc_devices},
            {"params", req.params},
            {"major", r.major},
            {"count", r.count},
            {"count_source", r.count_from_params ? "params" : "default"},
            {"create_imex_channel0",
             r.params.create_imex_channel0 ? nlohmann::json(*r.params.create_imex_channel0) : nlohmann::json(nullptr)},
            {"owner", owner_json(r.owner)},
            {"mode", format_mode(r.mode)},
            {"mode_source", mode_source_name(r.mode_source)},
            {"directory", std::move(dir)},
            {"channels", std::move(channels)},
            {"summary", std::move(summary)}};
}

nlohmann::json verify_json(const ImexVerifyOutcome& v) {
    const FabricVerifyResult& got = v.got;
    nlohmann::json j{{"ok", got.ok},
                     {"device", v.device ? nlohmann::json(*v.device) : nlohmann::json(nullptr)},
                     {"uid", got.uid},
                     {"gid", got.gid},
                     {"as", format_owner(v.as)},
                     {"granularity_bytes", got.granularity}};
    j["error"] = got.problem ? cumemctl::to_json(*got.problem) : nlohmann::json(nullptr);
    j["steps"] = steps_json(got.steps);
    return j;
}

}  // namespace

nlohmann::json ImexSetupResults::to_json() const {
    nlohmann::json j = setup_json(request, result);
    if (verify) j["verify"] = verify_json(*verify);
    return j;
}

namespace {

// How a terminal colours an action: done as asked, done differently, or not done.
Tone action_tone(Action action) {
    switch (action) {
        case Action::created:
        case Action::unchanged:
            return Tone::good;
        case Action::kept:
        case Action::fixed:
        case Action::replaced:
            return Tone::attention;
        case Action::refused:
        case Action::error:
            return Tone::bad;
        case Action::removed:
        case Action::planned:
            break;
    }
    return Tone::plain;
}

Table channels_table(const ImexSetupRequest& req, const ImexSetupResult& r) {
    Table t;
    t.title = "IMEX channels";
    t.columns = {"channel", "path", "device", "owner", "mode", "action", "detail"};
    const std::string owner = format_owner(r.owner);
    for (const auto& c : r.channels) {
        // A kept channel is shown as it stays, not as asked.
        const bool kept = c.action == Action::kept;
        t.rows.push_back({std::to_string(c.want.channel),
                          fmt::format("{}/{}", r.directory.path, channel_name(c.want.channel)),
                          format_device(c.want.major, c.want.channel_minor()),
                          kept ? format_owner(owner_of(c.found.uid, c.found.gid)) : owner,
                          format_mode(kept ? c.found.mode : c.want.mode),
                          {std::string(action_name(c.action)), action_tone(c.action)},
                          channel_detail(c)});
    }
    t.notes.push_back(fmt::format("{}: major {}, {} channels ({})", "nvidia-caps-imex-channels", r.major, r.count,
                                  r.count_from_params ? "ImexChannelCount in " + req.params : "the driver's default"));
    t.notes.push_back(fmt::format("folder {}: {}", r.directory.path, action_name(r.directory.action)));
    std::map<std::string, int> counts;
    for (const auto& c : r.channels) ++counts[std::string(action_name(c.action))];
    std::string summary;
    for (const auto& [name, n] : counts) summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, name);
    t.notes.push_back(fmt::format("{} channel{}: {}{}", r.channels.size(), r.channels.size() == 1 ? "" : "s", summary,
                                  req.check     ? " (--check: nothing changed)"
                                  : req.dry_run ? " (--dry-run: nothing changed)"
                                                : ""));
    return t;
}

// --verify's table: as whom, on which device, and what the child found.
Table verify_table(const ImexVerifyOutcome& verify) {
    const FabricVerifyResult& got = verify.got;
    Table t{
        "Verify: a fabric-handle allocation, made and exported in a child process", {"as", "device", "result"}, {}, {}};
    t.rows.push_back({format_owner(verify.as), verify.device ? std::to_string(*verify.device) : verify.typed,
                      got.ok ? fmt::format("pass ({} allocation)", format_size(got.granularity))
                             : "fail: " + (got.problem ? got.problem->message : std::string("unknown"))});
    return t;
}

}  // namespace

std::vector<Table> ImexSetupResults::tables(const Report& /*report*/) const {
    std::vector<Table> tables{channels_table(request, result)};
    if (verify) tables.push_back(verify_table(*verify));
    return tables;
}

}  // namespace cumemctl::cmd
