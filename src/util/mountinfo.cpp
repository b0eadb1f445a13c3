#include "util/mountinfo.hpp"

#include <algorithm>

namespace cumemctl {
namespace {

// The fields of one line, split at single spaces.
std::vector<std::string_view> fields(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    while (start <= line.size()) {
        const std::size_t end = std::min(line.find(' ', start), line.size());
        out.push_back(line.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

}  // namespace

std::vector<MountLine> parse_mountinfo(std::string_view text) {
    std::vector<MountLine> out;
    while (!text.empty()) {
        const std::size_t end = std::min(text.find('\n'), text.size());
        const auto f = fields(text.substr(0, end));
        text.remove_prefix(std::min(end + 1, text.size()));
        if (f.size() < 10) continue;
        const auto dash = std::find(f.begin() + 6, f.end(), "-");
        if (f.end() - dash < 4) continue;
        out.push_back(MountLine{f[2], f[4], dash[1], dash[3]});
    }
    return out;
}

}  // namespace cumemctl
