#include "imex/channel_plan.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/enum_words.hpp"
#include "base/setting.hpp"
#include "util/file_mode.hpp"

namespace cumemctl::imex {
namespace {

bool is_device_node(NodeKind kind) {
    return kind == NodeKind::char_device || kind == NodeKind::block_device;
}

bool right_device(const NodeSpec& want, const NodeState& have) {
    return have.kind == NodeKind::char_device && have.major == want.major && have.minor == want.channel_minor();
}

// "character device 242:3" or "block device 242:0".
std::string describe_device(const NodeState& have) {
    return fmt::format("{} {}", node_kind_name(have.kind), format_device(have.major, have.minor));
}

std::string wrong_device_detail(const NodeSpec& want, const NodeState& have) {
    return fmt::format("{}, not character device {}", describe_device(have),
                       format_device(want.major, want.channel_minor()));
}

// A class's read and write bits (04 read, 02 write): shift 6 for the owner, 3 the group, 0 every user.
unsigned read_write(mode_t mode, int shift) {
    return (static_cast<unsigned>(mode) >> shift) & 06U;
}

// "read and write", "read" or "write".
std::string_view access_words(unsigned bits) {
    return bits == 06U ? "read and write" : bits == 04U ? "read" : "write";
}

// "owner 1000:1000, mode 0600".
std::string describe_access(uid_t uid, gid_t gid, mode_t mode) {
    return fmt::format("owner {}:{}, mode {}", uid, gid, format_mode(mode));
}

ChannelPlan plan_removal(const NodeSpec& want, const NodeState& have, const PlanOptions& options) {
    if (have.kind == NodeKind::missing) return {Change::none, "absent"};
    if (!is_device_node(have.kind)) {
        return {Change::refuse, fmt::format("a {}; only device nodes are ever removed", node_kind_name(have.kind))};
    }
    if (right_device(want, have)) return {Change::remove, describe_device(have)};
    if (options.force) return {Change::remove, wrong_device_detail(want, have)};
    return {Change::refuse,
            fmt::format("{}; {} removes it", wrong_device_detail(want, have), setting_name(Setting::replace_nodes))};
}

constexpr auto kChangeWords = enum_words<Change>({{Change::none, "none"},
                                                  {Change::create, "create"},
                                                  {Change::fix, "fix"},
                                                  {Change::keep, "keep"},
                                                  {Change::replace, "replace"},
                                                  {Change::remove, "remove"},
                                                  {Change::refuse, "refuse"}},
                                                 "none");

}  // namespace

ChannelPlan plan_channel(const NodeSpec& want, const NodeState& have, const PlanOptions& options) {
    if (options.remove) return plan_removal(want, have, options);
    if (have.kind == NodeKind::missing) return {Change::create, "absent"};
    if (!is_device_node(have.kind)) {
        return {Change::refuse,
                fmt::format("a {}; cumemctl never changes anything but a device node", node_kind_name(have.kind))};
    }
    if (!right_device(want, have)) {
        if (options.force) return {Change::replace, wrong_device_detail(want, have)};
        return {Change::refuse, fmt::format("{}; {} replaces it", wrong_device_detail(want, have),
                                            setting_name(Setting::replace_nodes))};
    }
    if ((have.uid != want.uid || have.gid != want.gid || have.mode != want.mode) && !options.force &&
        !options.access_given) {
        const std::string concern = access_concern(have, want);
        if (!concern.empty()) {
            return {Change::keep,
                    fmt::format("kept {}: with the default ({}) {}; {}, or {} or {}, changes it",
                                describe_access(have.uid, have.gid, have.mode),
                                describe_access(want.uid, want.gid, want.mode), concern,
                                setting_name(Setting::replace_nodes), setting_name(Setting::channel_owner),
                                setting_name(Setting::channel_mode))};
        }
    }
    std::string detail;
    if (have.uid != want.uid || have.gid != want.gid) {
        detail = fmt::format("owner {}:{} -> {}:{}", have.uid, have.gid, want.uid, want.gid);
    }
    if (have.mode != want.mode) {
        if (!detail.empty()) detail += ", ";
        detail += fmt::format("mode {} -> {}", format_mode(have.mode), format_mode(want.mode));
    }
    return {detail.empty() ? Change::none : Change::fix, detail};
}

std::string access_concern(const NodeState& have, const NodeSpec& want) {
    std::vector<std::string> why;
    const unsigned everyone = read_write(want.mode, 0);
    if (const unsigned gained = everyone & ~read_write(have.mode, 0)) {
        why.push_back(fmt::format("every user could {} it", access_words(gained)));
    }
    // What the new group's members and the new owner could do before: their own class's bits where the
    // class is the same, else what every user could.
    const unsigned group_before = want.gid == have.gid ? read_write(have.mode, 3) : read_write(have.mode, 0);
    if (const unsigned gained = read_write(want.mode, 3) & ~group_before & ~everyone) {
        why.push_back(fmt::format("group {} could {} it", want.gid, access_words(gained)));
    }
    const unsigned owner_before = want.uid == have.uid ? read_write(have.mode, 6) : read_write(have.mode, 0);
    if (const unsigned gained = read_write(want.mode, 6) & ~owner_before & ~everyone; gained != 0 && want.uid != 0) {
        why.push_back(fmt::format("uid {} could {} it", want.uid, access_words(gained)));
    }
    // A channel of its owner's own (what its owner may do and every user may not) stays its owner's.
    const unsigned own = read_write(have.mode, 6) & ~read_write(have.mode, 0);
    if (const unsigned lost = own & ~everyone; lost != 0 && have.uid != want.uid && have.uid != 0) {
        why.push_back(fmt::format("uid {}, its owner, could no longer {} it", have.uid, access_words(lost)));
    }
    return fmt::format("{}", fmt::join(why, ", and "));
}

std::string_view change_name(Change change) {
    return kChangeWords.word(change);
}

}  // namespace cumemctl::imex
