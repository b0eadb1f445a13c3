#include "report/html_parts.hpp"
#include "util/printable.hpp"

#include <cmath>

#include <fmt/format.h>

namespace cumemctl::html {

std::string escape(std::string_view raw) {
    const std::string text = printable_lines(raw);  // no control character, nothing XML 1.0 forbids
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string scale_colour(double gbps, double max_gbps) {
    // Three stops: orange (slow), pale yellow, blue (fast); linear between them.
    struct Rgb {
        double r, g, b;
    };
    constexpr Rgb kStops[] = {{253, 174, 97}, {255, 255, 191}, {44, 123, 182}};
    double t = max_gbps > 0 ? gbps / max_gbps : 0;
    t = std::isfinite(t) ? std::fmin(1.0, std::fmax(0.0, t)) : 0.0;
    const int i = t < 0.5 ? 0 : 1;
    const double f = t < 0.5 ? t / 0.5 : (t - 0.5) / 0.5;
    auto mix = [&](double a, double b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
    return fmt::format("#{:02x}{:02x}{:02x}", mix(kStops[i].r, kStops[i + 1].r), mix(kStops[i].g, kStops[i + 1].g),
                       mix(kStops[i].b, kStops[i + 1].b));
}

}  // namespace cumemctl::html
