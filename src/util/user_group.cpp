#include "util/user_group.hpp"

#include <grp.h>
#include <pwd.h>

#include <charconv>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "base/error.hpp"

namespace cumemctl {
namespace {

constexpr std::size_t kLookupBuffer = 16384;

std::optional<passwd> find_user(const std::string& name, std::vector<char>& buffer) {
    passwd pw{};
    passwd* found = nullptr;
    buffer.assign(kLookupBuffer, '\0');
    if (getpwnam_r(name.c_str(), &pw, buffer.data(), buffer.size(), &found) != 0 || found == nullptr)
        return std::nullopt;
    return pw;
}

std::optional<gid_t> find_group(const std::string& name) {
    std::vector<char> buffer(kLookupBuffer);
    group gr{};
    group* found = nullptr;
    if (getgrnam_r(name.c_str(), &gr, buffer.data(), buffer.size(), &found) != 0 || found == nullptr)
        return std::nullopt;
    return gr.gr_gid;
}

std::optional<unsigned> as_number(std::string_view text) {
    unsigned value = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size()) return std::nullopt;
    // -1 means "unchanged" to chown(2); never accept it as an id.
    if (value == static_cast<unsigned>(-1)) return std::nullopt;
    return value;
}

[[noreturn]] void bad_owner(std::string_view spec, const std::string& why, std::string_view option) {
    throw Error(ExitCode::usage, fmt::format("invalid {} '{}': {}", option, spec, why),
                "give USER or USER:GROUP, each a name known to this system or a number (e.g. nobody, 1000:1000)");
}

}  // namespace

Owner resolve_owner(std::string_view spec, std::string_view option) {
    const std::size_t colon = spec.find(':');
    const std::string user(spec.substr(0, colon));
    const std::string group_text =
        colon == std::string_view::npos ? std::string() : std::string(spec.substr(colon + 1));
    if (user.empty()) bad_owner(spec, "no user", option);
    if (colon != std::string_view::npos && group_text.empty()) bad_owner(spec, "no group after ':'", option);
    std::vector<char> buffer;
    Owner owner;
    std::optional<gid_t> primary;
    if (auto pw = find_user(user, buffer)) {
        owner.uid = pw->pw_uid;
        primary = pw->pw_gid;
    } else if (auto n = as_number(user)) {
        owner.uid = *n;
        std::vector<char> by_id(kLookupBuffer);
        passwd entry{};
        passwd* found = nullptr;
        if (getpwuid_r(owner.uid, &entry, by_id.data(), by_id.size(), &found) == 0 && found != nullptr) {
            primary = entry.pw_gid;
        }
    } else {
        bad_owner(spec, fmt::format("no user '{}' on this system", user), option);
    }
    if (!group_text.empty()) {
        if (auto g = find_group(group_text)) {
            owner.gid = *g;
        } else if (auto n = as_number(group_text)) {
            owner.gid = *n;
        } else {
            bad_owner(spec, fmt::format("no group '{}' on this system", group_text), option);
        }
    } else if (primary) {
        owner.gid = *primary;
    } else {
        bad_owner(spec, fmt::format("user {} has no passwd entry, so it has no primary group", user), option);
    }
    return owner_of(owner.uid, owner.gid);
}

Owner owner_of(uid_t uid, gid_t gid) {
    Owner owner;
    owner.uid = uid;
    owner.gid = gid;
    std::vector<char> buffer(kLookupBuffer);
    passwd pw{};
    passwd* pw_found = nullptr;
    if (getpwuid_r(uid, &pw, buffer.data(), buffer.size(), &pw_found) == 0 && pw_found != nullptr) {
        owner.user = pw.pw_name;
    }
    group gr{};
    group* gr_found = nullptr;
    if (getgrgid_r(gid, &gr, buffer.data(), buffer.size(), &gr_found) == 0 && gr_found != nullptr) {
        owner.group = gr.gr_name;
    }
    return owner;
}

std::string format_owner(const Owner& owner) {
    return fmt::format("{}:{}", owner.user.empty() ? std::to_string(owner.uid) : owner.user,
                       owner.group.empty() ? std::to_string(owner.gid) : owner.group);
}

}  // namespace cumemctl
