// What the HTML pages (render/) and the other renderers that write markup share: escaping, and
// the colours of the heat map.
#pragma once

#include <string>
#include <string_view>

namespace cumemctl::html {

// Text for HTML (and XML 1.0) text and attribute values, whatever bytes it holds: control characters,
// direction marks, U+FFFE/U+FFFF and bytes that are not UTF-8 written out (printable_lines), then
// & < > " ' escaped. Tab and newline stay.
std::string escape(std::string_view text);

// The colours of the heat map and the legend.
inline constexpr const char* kFailColour = "#d7191c";     // a pair that failed
inline constexpr const char* kMissingColour = "#bdbdbd";  // no measurement (a pass without GB/s)

// The colour of a passing pair reading `gbps` on a scale from 0 (orange) through yellow to `max_gbps`
// (blue), as "#rrggbb".
std::string scale_colour(double gbps, double max_gbps);

}  // namespace cumemctl::html
