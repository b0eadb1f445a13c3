#include "util/file_mode.hpp"

#include <fmt/format.h>

#include "base/error.hpp"

namespace cumemctl {

mode_t parse_mode(std::string_view text, std::string_view what) {
    std::string_view digits = text;
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'o' || digits[1] == 'O')) digits.remove_prefix(2);
    unsigned value = 0;
    bool good = !digits.empty() && digits.size() <= 4;
    for (char c : digits) {
        if (c < '0' || c > '7') {
            good = false;
            break;
        }
        value = value * 8 + static_cast<unsigned>(c - '0');
    }
    if (!good) {
        throw Error(ExitCode::usage, fmt::format("invalid {} '{}': not an octal mode", what, text),
                    "give the mode in octal, such as 0600 (owner only) or 0660 (owner and group)");
    }
    if (value > 0777) {
        throw Error(ExitCode::usage, fmt::format("invalid {} '{}': set-id and sticky bits are not allowed", what, text),
                    "give permission bits only, 0000 to 0777");
    }
    return static_cast<mode_t>(value);
}

std::string format_mode(mode_t mode) {
    return fmt::format("{:04o}", static_cast<unsigned>(mode & 07777));
}

std::optional<std::string> others_can_change(const struct stat& st, uid_t also_trusted, bool sticky_ok) {
    if (st.st_uid != 0 && st.st_uid != also_trusted) return fmt::format("belongs to uid {}", st.st_uid);
    const mode_t mode = st.st_mode & 07777;
    if (sticky_ok && S_ISDIR(st.st_mode) && (mode & S_ISVTX) != 0) return std::nullopt;
    if ((mode & S_IWOTH) != 0) return fmt::format("is writable by every user (mode {})", format_mode(mode));
    if ((mode & S_IWGRP) != 0)
        return fmt::format("is writable by its group, gid {} (mode {})", st.st_gid, format_mode(mode));
    return std::nullopt;
}

}  // namespace cumemctl
