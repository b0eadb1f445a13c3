// LineRenderer (renderer.hpp): --format line, the report in one line for a drain reason.
#include "report/renderer.hpp"
#include "util/printable.hpp"

namespace cumemctl {

void LineRenderer::render(const Report& report, std::ostream& out) const {
    std::string line = report.results ? report.results->line() : std::string();
    if (line.empty())
        line = report.errors.empty() ? "cumemctl: ok" : "cumemctl: error " + report.errors.front().message;
    for (char& c : line) {
        if (c == '\n' || c == '\t') c = ' ';
    }
    line = printable(line);
    if (line.size() > kSummaryLineWidth) {
        std::size_t cut = kSummaryLineWidth - 3;  // never inside a UTF-8 sequence
        while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
        line = line.substr(0, cut) + "...";
    }
    out << line << '\n';
}

}  // namespace cumemctl
