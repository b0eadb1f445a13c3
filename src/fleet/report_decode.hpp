// One JSON document of a fleet input decoded into a typed report (node_report.hpp), each field checked
// against the type report.schema.json gives it; what the summary does not need is skipped unbuilt.
#pragma once

#include <string>
#include <variant>

#include "util/json_cursor.hpp"
#include "fleet/node_report.hpp"

namespace cumemctl::fleet {

// Why a document is no report that fleet reads (the input problem's words).
struct NotAReport {
    std::string why;
};

using Decoded = std::variant<NodeReport, MatrixReport, NotAReport>;

// Decodes the document at the cursor (which ends just after it). JSON that does not parse throws
// JsonSyntaxError or JsonIncomplete; a report of the wrong shape comes back with `malformed` set.
Decoded decode_document(JsonCursor& cursor, int max_depth);

}  // namespace cumemctl::fleet
