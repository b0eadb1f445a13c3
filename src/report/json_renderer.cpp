// JsonRenderer (renderer.hpp): --json, the report's envelope as one pretty-printed JSON document.
#include "report/renderer.hpp"

namespace cumemctl {

void JsonRenderer::render(const Report& report, std::ostream& out) const {
    out << to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace cumemctl
