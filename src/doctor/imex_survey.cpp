#include "doctor/imex_survey.hpp"

#include <charconv>
#include <sstream>

#include <fmt/format.h>

#include "imex/nvidia_params.hpp"
#include "imex/proc_devices.hpp"
#include "base/error.hpp"
#include "report/json_fields.hpp"
#include "util/mountinfo.hpp"
#include "util/text_file.hpp"
#include "util/trusted_file.hpp"

namespace cumemctl::doctor {
using namespace imex;

ChannelSurvey survey_channels(const std::string& sysroot) {
    ChannelSurvey s;
    // What decides the channels' verdict is read as root reads what decides what it makes (trusted_file).
    std::string refused;
    const auto devices = try_read_trusted_text(sysroot + "/proc/devices", refused);
    s.proc_devices_read = devices.has_value();
    try {
        if (devices) {
            const auto major = find_char_major(*devices, kImexChannelsDeviceName, "/proc/devices");
            if (major) s.major = static_cast<unsigned>(*major);
        }
        const auto params = try_read_trusted_text(sysroot + "/proc/driver/nvidia/params", refused);
        if (params) {
            const NvidiaParams p = parse_nvidia_params(*params, "/proc/driver/nvidia/params");
            if (p.imex_channel_count) s.channel_count = static_cast<int>(*p.imex_channel_count);
            if (p.create_imex_channel0) s.create_channel0 = *p.create_imex_channel0 ? 1 : 0;
        }
    } catch (const Error& e) {
        s.unreadable = e.what();
    }
    s.refused = refused;
    ChannelFolder folder = read_channel_folder(sysroot + imex::kImexChannelDir);
    s.dir_exists = folder.exists;
    s.nodes = std::move(folder.entries);
    s.dir_mount_type =
        mount_type_at(try_read_text_file(sysroot + "/proc/self/mountinfo").value_or(""), kImexChannelDir);
    return s;
}

std::string mount_type_at(std::string_view mountinfo, std::string_view path) {
    std::string type;
    for (const MountLine& m : parse_mountinfo(mountinfo)) {
        if (m.mount_point == path) type = m.type;
    }
    return type;
}

bool private_step_folder(const ChannelSurvey& survey) {
    return survey.dir_mount_type == "tmpfs" && survey.nodes.size() == 1 && survey.nodes.front().channel >= 0;
}

std::string channel_node_problem(const ChannelEntry& node, const ChannelSurvey& survey) {
    if (node.channel < 0) return {};  // not a channel name: the driver ignores it
    if (node.type != 'c') {
        return fmt::format("{} is not a character device (type '{}')", node.name, node.type);
    }
    if (survey.major && node.major != *survey.major) {
        return fmt::format("{} has device number {}:{}, not the IMEX channel major {}", node.name, node.major,
                           node.minor, *survey.major);
    }
    if (node.minor != static_cast<unsigned>(node.channel)) {
        return fmt::format("{} has minor {}, not {}", node.name, node.minor, node.channel);
    }
    if (survey.channel_count && node.channel >= *survey.channel_count) {
        return fmt::format("{} is beyond the driver's ImexChannelCount ({})", node.name, *survey.channel_count);
    }
    return {};
}

UserSurvey survey_users(const std::string& sysroot) {
    UserSurvey u;
    // Whom the channels are open to is judged from files that only root may change (trusted_file).
    std::string refused;
    std::istringstream nss(try_read_trusted_text(sysroot + "/etc/nsswitch.conf", refused).value_or(""));
    std::string line;
    while (std::getline(nss, line)) {
        if (line.rfind("passwd:", 0) != 0) continue;
        std::istringstream sources(line.substr(7));
        std::string src;
        while (sources >> src) {
            if (src == "sss" || src == "ldap" || src == "nis" || src == "winbind") {
                u.why = fmt::format("accounts from a directory service ({} in /etc/nsswitch.conf)", src);
                return u;
            }
        }
    }
    const auto passwd_text = try_read_trusted_text(sysroot + "/etc/passwd", refused);
    std::istringstream passwd(passwd_text.value_or(""));
    if (!passwd_text || !refused.empty()) {
        u.why = refused.empty() ? "/etc/passwd cannot be read (counted as multi-user)"
                                : fmt::format("{} (counted as multi-user)", refused);
        return u;
    }
    std::vector<std::string> people;
    while (std::getline(passwd, line)) {
        std::vector<std::string> f;
        std::istringstream fields(line);
        std::string field;
        while (std::getline(fields, field, ':')) f.push_back(field);
        if (f.size() < 7) continue;
        long uid = -1;
        std::from_chars(f[2].data(), f[2].data() + f[2].size(), uid);
        const std::string& shell = f[6];
        const bool login = shell.find("nologin") == std::string::npos && shell.find("false") == std::string::npos &&
                           shell.find("sync") == std::string::npos && !shell.empty();
        if (uid >= 1000 && uid != 65534 && login) people.push_back(f[0]);
    }
    u.multi_user = people.size() >= 2;
    u.why = people.empty()       ? "no login account besides root"
            : people.size() == 1 ? fmt::format("one login account ({})", people.front())
                                 : fmt::format("{} login accounts ({})", people.size(), fmt::join(people, ", "));
    return u;
}

std::string octal_mode(unsigned mode) {
    return fmt::format("0{:03o}", mode & 07777);
}

nlohmann::json to_json(const ChannelSurvey& survey) {
    auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& n : survey.nodes) {
        nodes.push_back({{"name", n.name},
                         {"channel", n.channel >= 0 ? nlohmann::json(n.channel) : nlohmann::json(nullptr)},
                         {"type", std::string(1, n.type)},
                         {"major", n.major},
                         {"minor", n.minor},
                         {"uid", n.uid},
                         {"gid", n.gid},
                         {"mode", octal_mode(n.mode)},
                         {"usable", n.usable},
                         {"problem", text_or_null(channel_node_problem(n, survey))}});
    }
    return {{"directory", imex::kImexChannelDir},
            {"directory_exists", survey.dir_exists},
            {"major", opt(survey.major)},
            {"channel_count", opt(survey.channel_count)},
            {"create_channel0", opt(survey.create_channel0)},
            {"directory_mount",
             survey.dir_mount_type.empty() ? nlohmann::json(nullptr) : nlohmann::json(survey.dir_mount_type)},
            {"private_to_step", private_step_folder(survey)},
            {"nodes", std::move(nodes)}};
}

}  // namespace cumemctl::doctor
