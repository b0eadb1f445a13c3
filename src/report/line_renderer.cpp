// LineRenderer (renderer.hpp): --format line, the report in one line for a drain reason.
#include "report/renderer.hpp"

namespace cumemctl {

void LineRenderer::render(const Report& report, std::ostream& out) const {
    std::string line = report.line;
    if (line.empty())
        line = report.errors.empty() ? "cumemctl: ok" : "cumemctl: error " + report.errors.front().message;
    for (char& c : line) {
        if (c == '\n' || c == '\t') c = ' ';
    }
    if (line.size() > kSummaryLineWidth) line = line.substr(0, kSummaryLineWidth - 3) + "...";
    out << line << '\n';
}

}  // namespace cumemctl
