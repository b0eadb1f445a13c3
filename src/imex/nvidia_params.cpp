#include "imex/nvidia_params.hpp"

#include <charconv>

#include <fmt/format.h>

#include "base/setting.hpp"
#include "imex/proc_line.hpp"

namespace cumemctl::imex {
namespace {

// A parameter that imex-setup reads: its name, the largest value it may hold, and where it goes
// (null for CreateImexChannel0, a flag: any value but 0 is on).
struct Known {
    std::string_view name;
    std::uint64_t max;
    std::optional<std::uint32_t> NvidiaParams::*field;
};

constexpr Known kKnown[] = {
    {"ImexChannelCount", kMaxImexChannelCount, &NvidiaParams::imex_channel_count},
    {"CreateImexChannel0", 0xffffffffULL, nullptr},
    {"DeviceFileMode", 07777, &NvidiaParams::device_file_mode},
    {"DeviceFileUID", 0xfffffffeULL, &NvidiaParams::device_file_uid},
    {"DeviceFileGID", 0xfffffffeULL, &NvidiaParams::device_file_gid},
};

bool is_name_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

std::uint32_t read_value(const ProcLine& line, std::string_view name, std::string_view value, std::uint64_t max,
                         std::string_view source, const std::string& remedy) {
    std::uint64_t v = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc{} || ptr != value.data() + value.size()) {
        throw_unreadable_line(source, line, fmt::format("{} is not a decimal number", name), remedy);
    }
    if (v > max) throw_unreadable_line(source, line, fmt::format("{} is above {}", name, max), remedy);
    return static_cast<std::uint32_t>(v);
}

}  // namespace

NvidiaParams parse_nvidia_params(std::string_view text, std::string_view source) {
    const std::string remedy =
        format_remedy(setting_name(Setting::params_file), "the driver's /proc/driver/nvidia/params",
                      "one 'Name: value' line per parameter");
    NvidiaParams params;
    bool seen[std::size(kKnown)] = {};
    for_each_line(text, [&](const ProcLine& line) {
        if (trim_blanks(line.text).empty()) return;
        const std::size_t colon = line.text.find(':');
        const std::string_view name = colon == std::string_view::npos ? std::string_view() : line.text.substr(0, colon);
        bool good_name = !name.empty();
        for (char c : name) good_name = good_name && is_name_char(c);
        if (!good_name) throw_unreadable_line(source, line, "not a 'Name: value' line", remedy);
        for (std::size_t k = 0; k < std::size(kKnown); ++k) {
            if (name != kKnown[k].name) continue;
            if (seen[k]) throw_unreadable_line(source, line, fmt::format("{} listed twice", name), remedy);
            seen[k] = true;
            const std::uint32_t v =
                read_value(line, name, trim_blanks(line.text.substr(colon + 1)), kKnown[k].max, source, remedy);
            if (kKnown[k].field != nullptr) {
                params.*kKnown[k].field = v;
            } else {
                params.create_imex_channel0 = v != 0;
            }
        }
    });
    return params;
}

}  // namespace cumemctl::imex
