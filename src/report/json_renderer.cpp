// JsonRenderer (renderer.hpp): --json, the report's envelope as one pretty-printed JSON document.
#include "report/renderer.hpp"

namespace cumemctl {

void JsonRenderer::render(const Report& report, std::ostream& out) const {
    out << report_json_text(report) << '\n';
}

}  // namespace cumemctl
