#include "imex/proc_devices.hpp"

#include <fmt/format.h>

#include "imex/proc_line.hpp"
#include "base/error.hpp"
#include "base/setting.hpp"

namespace cumemctl::imex {
namespace {

enum class Section { none, character, other };

// A section heading: letters and spaces ending in ':' ("Character devices:", "Block devices:").
bool is_heading(std::string_view line) {
    if (line.size() < 2 || line.back() != ':') return false;
    for (char c : line.substr(0, line.size() - 1)) {
        const bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
        if (!letter && c != ' ') return false;
    }
    return line.front() != ' ';
}

// A name as the kernel prints it: printable ASCII without blanks.
bool is_device_name(std::string_view name) {
    if (name.empty()) return false;
    for (char c : name) {
        if (c <= 0x20 || c >= 0x7f) return false;
    }
    return true;
}

struct Entry {
    int major = 0;
    std::string_view name;
};

// Reads "  242 name": an optional indent, 1 to 4 digits (at most kMaxMajor), blanks, the name.
Entry read_entry(const ProcLine& line, std::string_view source, const std::string& remedy) {
    std::string_view rest = line.text;
    while (!rest.empty() && is_blank(rest.front())) rest.remove_prefix(1);
    int major = 0;
    std::size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') {
        if (digits == 4) throw_unreadable_line(source, line, "major number too large", remedy);
        major = major * 10 + (rest[digits] - '0');
        ++digits;
    }
    if (digits == 0) throw_unreadable_line(source, line, "not a heading or a 'MAJOR NAME' line", remedy);
    if (major > kMaxMajor) throw_unreadable_line(source, line, "major number too large", remedy);
    rest.remove_prefix(digits);
    if (rest.empty() || !is_blank(rest.front())) {
        throw_unreadable_line(source, line, "no blank between the major number and the name", remedy);
    }
    const std::string_view name = trim_blanks(rest);
    if (!is_device_name(name)) throw_unreadable_line(source, line, "not a device name", remedy);
    return Entry{major, name};
}

}  // namespace

std::optional<int> find_char_major(std::string_view text, std::string_view name, std::string_view source) {
    const std::string remedy = format_remedy(setting_name(Setting::proc_devices), "the kernel's /proc/devices",
                                             "'Character devices:', then one 'MAJOR NAME' line per driver");
    Section section = Section::none;
    bool saw_character = false;
    std::optional<int> found;
    for_each_line(text, [&](const ProcLine& line) {
        if (trim_blanks(line.text).empty()) return;
        if (is_heading(line.text)) {
            section = line.text == "Character devices:" ? Section::character : Section::other;
            saw_character = saw_character || section == Section::character;
            return;
        }
        const Entry entry = read_entry(line, source, remedy);
        if (section == Section::none)
            throw_unreadable_line(source, line, "a device before any section heading", remedy);
        if (section != Section::character || entry.name != name) return;
        if (found && *found != entry.major) {
            throw_unreadable_line(source, line,
                                  fmt::format("{} listed again with another major (first {})", name, *found), remedy);
        }
        found = entry.major;
    });
    if (!saw_character) {
        throw Error(ExitCode::unavailable, fmt::format("{}: no 'Character devices:' section", source), remedy);
    }
    return found;
}

}  // namespace cumemctl::imex
