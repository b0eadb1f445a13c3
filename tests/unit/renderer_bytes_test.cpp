// Every renderer writes well-formed output whatever bytes outside text holds: random bytes (from a
// seeded generator, so that a failure repeats) in every text field that another node, a driver or a
// process name can fill, rendered as JUnit XML, HTML, the terminal's table and line, JSON, Prometheus
// and NFD, each output then checked against its format's rules.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "doctor/doctor_results.hpp"
#include "doctor/renderers.hpp"
#include "fixed_views.hpp"
#include "fleet/fleet_results.hpp"
#include "render/html_renderer.hpp"
#include "report/renderer.hpp"

namespace {

using cumemctl::Report;

// Random text, biased toward what breaks formats: controls, quotes, markup, U+FFFE/U+FFFF, a lone
// surrogate's bytes, bytes that are not UTF-8, and plain letters.
class Bytes {
public:
    explicit Bytes(std::uint32_t seed) : gen_(seed) {}
    std::string next() {
        static const std::vector<std::string> pieces{"\x1b[2J",
                                                     "\x1b]0;t\x07",
                                                     "\r",
                                                     "\n",
                                                     "\t",
                                                     std::string(1, '\0'),
                                                     "\x7f",
                                                     "\xc2\x85",
                                                     "\xef\xbf\xbf",
                                                     "\xef\xbf\xbe",
                                                     "\xed\xa0\x80",
                                                     "\xff",
                                                     "\xfe",
                                                     "\xc0\xaf",
                                                     "<",
                                                     ">",
                                                     "&",
                                                     "\"",
                                                     "'",
                                                     "]]>",
                                                     "<!--",
                                                     "&#0;",
                                                     ",",
                                                     "=",
                                                     "\\",
                                                     "{",
                                                     "}",
                                                     "\xe2\x80\xae",
                                                     "\xf4\x90\x80\x80",
                                                     "a",
                                                     "gpu7",
                                                     " "};
        std::string out;
        const int n = std::uniform_int_distribution<int>(0, 12)(gen_);
        for (int i = 0; i < n; ++i) {
            if (std::uniform_int_distribution<int>(0, 2)(gen_) == 0) {
                out += static_cast<char>(std::uniform_int_distribution<int>(0, 255)(gen_));
            } else {
                out += pieces[std::uniform_int_distribution<std::size_t>(0, pieces.size() - 1)(gen_)];
            }
        }
        return out;
    }

private:
    std::mt19937 gen_;
};

// The code points of UTF-8 text; false where a byte is not part of a well-formed sequence.
bool decode_utf8(const std::string& s, std::vector<char32_t>& out) {
    for (std::size_t i = 0; i < s.size();) {
        const auto b = static_cast<unsigned char>(s[i]);
        const std::size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
        if (n == 0 || i + n > s.size()) return false;
        char32_t c = n == 1 ? b : b & (0x7F >> n);
        for (std::size_t k = 1; k < n; ++k) {
            const auto x = static_cast<unsigned char>(s[i + k]);
            if ((x & 0xC0) != 0x80) return false;
            c = (c << 6) | (x & 0x3F);
        }
        const char32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
        if (c < least[n] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return false;
        out.push_back(c);
        i += n;
    }
    return true;
}

// XML 1.0's Char production.
bool xml_char(char32_t c) {
    return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
           (c >= 0x10000 && c <= 0x10FFFF);
}

// Whether `xml` is a well-formed XML 1.0 document of the shape cumemctl writes: every character a
// Char, tags balanced and named, attribute values quoted without '<', every '&' a reference.
std::string xml_problem(const std::string& xml) {
    std::vector<char32_t> codes;
    if (!decode_utf8(xml, codes)) return "not UTF-8";
    for (const char32_t c : codes) {
        if (!xml_char(c)) return "a character XML 1.0 forbids";
    }
    std::vector<std::string> open;
    std::size_t i = 0;
    auto reference_ok = [&](std::size_t at) {
        const std::size_t end = xml.find(';', at);
        if (end == std::string::npos) return false;
        const std::string ref = xml.substr(at + 1, end - at - 1);
        if (ref == "amp" || ref == "lt" || ref == "gt" || ref == "quot" || ref == "apos") return true;
        if (ref.size() < 2 || ref[0] != '#') return false;
        const long v =
            ref[1] == 'x' ? std::strtol(ref.c_str() + 2, nullptr, 16) : std::strtol(ref.c_str() + 1, nullptr, 10);
        return xml_char(static_cast<char32_t>(v));
    };
    while (i < xml.size()) {
        if (xml[i] == '&' && !reference_ok(i)) return "a bare '&'";
        if (xml[i] == '>' && xml.compare(i >= 2 ? i - 2 : 0, 3, "]]>") == 0) return "']]>' in text";
        if (xml[i] != '<') {
            ++i;
            continue;
        }
        if (xml.compare(i, 2, "<?") == 0) {
            i = xml.find("?>", i);
            if (i == std::string::npos) return "an unclosed <?";
            i += 2;
            continue;
        }
        const std::size_t end = xml.find('>', i);
        if (end == std::string::npos) return "an unclosed tag";
        std::string tag = xml.substr(i + 1, end - i - 1);
        for (std::size_t q = 0; q < tag.size(); ++q) {
            if (tag[q] == '<') return "'<' inside a tag";
            if (tag[q] == '&' && !reference_ok(i + 1 + q)) return "a bare '&' in an attribute";
        }
        std::size_t quotes = 0;
        for (const char c : tag) quotes += c == '"' ? 1 : 0;
        if (quotes % 2 != 0) return "an attribute value not quoted";
        if (!tag.empty() && tag[0] == '/') {
            if (open.empty() || open.back() != tag.substr(1)) return "a closing tag that opens nothing";
            open.pop_back();
        } else if (!tag.empty() && tag.back() != '/') {
            open.push_back(tag.substr(0, tag.find_first_of(" \t\n")));
        }
        i = end + 1;
    }
    return open.empty() ? "" : "an element left open: " + open.back();
}

// Whether text for a terminal or an HTML page holds no control character (a newline and, in HTML, a
// tab aside) and is UTF-8.
std::string control_problem(const std::string& text, bool tab_ok) {
    std::vector<char32_t> codes;
    if (!decode_utf8(text, codes)) return "not UTF-8";
    for (const char32_t c : codes) {
        if (c == '\n' || (tab_ok && c == '\t')) continue;
        if (c < 0x20 || (c >= 0x7F && c <= 0x9F)) return "a control character";
    }
    return "";
}

template <class R>
std::string rendered(const R& renderer, const Report& report) {
    std::ostringstream out;
    renderer.render(report, out);
    return out.str();
}

// A doctor report whose every outside text is random.
Report doctor_report(Bytes& b) {
    Report report;
    report.command = "doctor";
    report.host = b.next();
    report.driver.loaded = true;
    cumemctl::doctor::DoctorRun run;
    run.driver_version = b.next();
    run.results.push_back({b.next(), std::nullopt, cumemctl::doctor::CheckOutcome::pass(b.next()), 0.5});
    run.results.push_back({b.next(), 1, cumemctl::doctor::CheckOutcome::fail(b.next(), b.next()), 0.25});
    run.results.push_back({b.next(), 0, cumemctl::doctor::CheckOutcome::busy(b.next(), b.next()), 0.25});
    run.results.push_back({b.next(), std::nullopt, cumemctl::doctor::CheckOutcome::skip(b.next()), 0.1});
    FixedViews<cumemctl::doctor::DoctorResults> views(run);
    views.fixed_line = b.next();
    views.fixed_tables.push_back({b.next(), {b.next(), b.next()}, {{b.next(), b.next()}}, {b.next()}, true});
    views.fixed_metrics.push_back({"check_status", "a check's status", {{"check", b.next()}, {"reason", b.next()}}, 1});
    report.set_results(std::move(views));
    report.add_error(cumemctl::Problem{.message = b.next(), .cause = b.next(), .remedy = b.next()});
    report.add_warning(b.next(), b.next());
    return report;
}

// A fleet report whose nodes, reasons, properties and input problems are random.
Report fleet_report(Bytes& b) {
    using namespace cumemctl::fleet;
    FleetResults results;
    for (int n = 0; n < 3; ++n) {
        NodeSummary node;
        node.host = b.next();
        node.status = n == 0 ? NodeStatus::fail : n == 1 ? NodeStatus::missing : NodeStatus::pass;
        node.error = b.next();
        node.failed = {b.next()};
        node.warned = {b.next()};
        node.properties = shared(Properties{{b.next(), b.next()}});
        CheckFailure f;
        f.check = b.next();
        f.device = 1;
        f.uuid = b.next();
        f.pci_bus_id = b.next();
        f.reason = b.next();
        f.remedy = b.next();
        node.failures.push_back(f);
        results.summary.nodes.push_back(node);
    }
    results.summary.checks.push_back({b.next(), {b.next()}, {b.next()}, b.next()});
    results.input_problems.push_back({b.next(), b.next()});
    Report report;
    report.command = "fleet";
    report.host = b.next();
    report.set_results(std::move(results));
    return report;
}

}  // namespace

TEST_CASE("every renderer writes well-formed output whatever bytes its outside text holds") {
    Bytes b(20261204);
    for (int round = 0; round < 300; ++round) {
        CAPTURE(round);
        const Report doctor = doctor_report(b);
        const std::string junit = rendered(cumemctl::doctor::JunitRenderer{}, doctor);
        CAPTURE(junit);
        CHECK(xml_problem(junit) == "");
        CHECK(control_problem(rendered(cumemctl::TableRenderer{}, doctor), false) == "");
        CHECK(control_problem(rendered(cumemctl::LineRenderer{}, doctor), false) == "");
        CHECK(control_problem(rendered(cumemctl::doctor::NfdRenderer{}, doctor), false) == "");
        CHECK(nlohmann::json::accept(rendered(cumemctl::JsonRenderer{}, doctor)));
        const std::string metrics = rendered(cumemctl::PrometheusRenderer{}, doctor);
        // Label values may hold any UTF-8 but a raw newline, backslash or quote (the text format).
        std::vector<char32_t> codes;
        CHECK(decode_utf8(metrics, codes));
        std::istringstream lines(metrics);
        for (std::string line; std::getline(lines, line);) {
            // A sample's label values are closed: an even count of unescaped quotes.
            std::size_t quotes = 0;
            for (std::size_t k = 0; k < line.size(); ++k) {
                if (line[k] == '\\')
                    ++k;
                else if (line[k] == '"')
                    ++quotes;
            }
            if (line.rfind('#', 0) != 0) CHECK(quotes % 2 == 0);
        }

        const Report fleet = fleet_report(b);
        const std::string html = rendered(cumemctl::HtmlRenderer{}, fleet);
        CAPTURE(html);
        CHECK(control_problem(html, true) == "");
        CHECK(control_problem(rendered(cumemctl::TableRenderer{}, fleet), false) == "");
        CHECK(nlohmann::json::accept(rendered(cumemctl::JsonRenderer{}, fleet)));
    }
}

TEST_CASE("the XML checker itself refuses what XML 1.0 forbids") {
    CHECK(xml_problem("<a>x</a>") == "");
    CHECK(xml_problem("<a>\xef\xbf\xbf</a>") != "");
    CHECK(xml_problem("<a>\x01</a>") != "");
    CHECK(xml_problem("<a>\xed\xa0\x80</a>") != "");
    CHECK(xml_problem("<a>\xff</a>") != "");
    CHECK(xml_problem("<a>&</a>") != "");
    CHECK(xml_problem("<a b=\"<\"/>") != "");
    CHECK(xml_problem("<a>") != "");
}
