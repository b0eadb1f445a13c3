#include "imex/proc_line.hpp"

#include <fmt/format.h>

#include "base/error.hpp"

namespace cumemctl::imex {

std::string quote_line(std::string_view line) {
    constexpr std::size_t kMax = 80;
    std::string out;
    for (std::size_t i = 0; i < line.size() && out.size() < kMax; ++i) {
        const auto c = static_cast<unsigned char>(line[i]);
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            out += fmt::format("\\x{:02x}", c);
        }
    }
    if (out.size() >= kMax && line.size() > kMax) out += "...";
    return out;
}

void throw_unreadable_line(std::string_view source, const ProcLine& line, std::string_view why,
                           std::string_view remedy) {
    throw Error(ExitCode::unavailable, fmt::format("{}:{}: {}: '{}'", source, line.number, why, quote_line(line.text)),
                std::string(remedy));
}

std::string format_remedy(const std::string& name, std::string_view file, std::string_view format) {
    return fmt::format("point {} at {}, or at a file in its format: {}", name, file, format);
}

std::string_view trim_blanks(std::string_view text) {
    while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
    while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
    return text;
}

}  // namespace cumemctl::imex
