// HtmlRenderer: --format html, one self-contained page (no scripts, nothing fetched: it opens from a
// file on a laptop) of fabric-matrix's heat map, or of fleet's summary with each fabric-matrix run's
// heat map (html_pages.hpp). The type of the report's results chooses the page. It sits above the
// folders whose results it draws (fleet, matrix), so it is not among report/renderer.hpp's renderers.
#pragma once

#include <ostream>

#include "report/renderer.hpp"

namespace cumemctl {

class HtmlRenderer final : public Renderer {
public:
    void render(const Report& report, std::ostream& out) const override;
};

}  // namespace cumemctl
