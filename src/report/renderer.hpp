// Output sinks behind one interface: each writes a whole report to a stream.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/report.hpp"

namespace cumemctl {

// Writes a report to a stream in one format.
class Renderer {
public:
    virtual ~Renderer() = default;
    virtual void render(const Report& report, std::ostream& out) const = 0;
};

// One JSON document (the envelope of report.hpp), pretty-printed, newline-terminated.
class JsonRenderer final : public Renderer {
public:
    void render(const Report& report, std::ostream& out) const override;
};

// Aligned text tables for people; colour only when asked (a terminal without NO_COLOR).
class TableRenderer final : public Renderer {
public:
    // `width` is the line width that tables with wrap_last fit (80, or the terminal's).
    explicit TableRenderer(bool colour = false, std::size_t width = 80) : colour_(colour), width_(width) {}
    void render(const Report& report, std::ostream& out) const override;

private:
    bool colour_;
    std::size_t width_;
};

// The Prometheus text exposition format (0.0.4), for node_exporter's textfile collector: gauges
// that every report has (build, driver, exit code, time), then the results' own (Results::metrics). Every
// family is prefixed "cumemctl_" and gets HELP and TYPE once; no sample carries a timestamp.
class PrometheusRenderer final : public Renderer {
public:
    void render(const Report& report, std::ostream& out) const override;
};

// One line of at most kSummaryLineWidth characters (a Slurm or NHC drain reason): the results' line (Results::line),
// else "cumemctl: error " and its first error's message, else "cumemctl: ok"; cut with "..." where longer.
class LineRenderer final : public Renderer {
public:
    void render(const Report& report, std::ostream& out) const override;
};

// Escapes a label value for the text format: backslash, double quote and newline.
std::string prometheus_escape(std::string_view value);

// Writes errors and warnings as people read them on stderr: "cumemctl: error: ..." then the remedy.
void write_problems(const Report& report, std::ostream& err);

// Renders one table (used by TableRenderer and by tests); `width` matters only with wrap_last, and 0
// wraps nothing (the output is no terminal: whole lines for grep).
void render_table(const Table& table, std::ostream& out, bool colour, std::size_t width = 80);

}  // namespace cumemctl
