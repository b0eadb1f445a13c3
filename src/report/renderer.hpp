// Output sinks behind one interface: each writes a whole report to a stream.
#pragma once

#include <memory>
#include <ostream>
#include <string_view>

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
    explicit TableRenderer(bool colour = false) : colour_(colour) {}
    void render(const Report& report, std::ostream& out) const override;

private:
    bool colour_;
};

// Writes errors and warnings as people read them on stderr: "cumemctl: error: ..." then the remedy.
void write_problems(const Report& report, std::ostream& err);

// Renders one table (used by TableRenderer and by tests).
void render_table(const Table& table, std::ostream& out, bool colour);

}  // namespace cumemctl
