// A command's answer as a C++ type: what it found, as every renderer takes it. Each type writes its
// JSON (the report's "results" member) in one place, its to_json, and draws its own views for the
// renderers that ask (tables, the one-line summary, metrics, a node list, a script): none by default.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "report/views.hpp"

namespace cumemctl {

struct Report;

class Results {
public:
    virtual ~Results() = default;
    // The report's "results" member.
    virtual nlohmann::json to_json() const = 0;
    // The tables for people (the table format), in order. `report` gives the envelope's facts (host,
    // driver) and warnings.
    virtual std::vector<Table> tables(const Report& /*report*/) const { return {}; }
    // Text written as is before the tables (a completion script).
    virtual std::string text() const { return {}; }
    // The one-line summary of --format line; empty: the line renderer's "cumemctl: ok" or first error.
    virtual std::string line() const { return {}; }
    // The samples --format prometheus writes after the gauges every report has.
    virtual std::vector<Metric> metrics(const Report& /*report*/) const { return {}; }
    // The Slurm host list of --format nodelist (fleet: its failing nodes); empty writes nothing.
    virtual std::string nodelist() const { return {}; }
};

// A real number as the report's JSON writes it ("0.5", "52.0", "1e-05"): a renderer that shows a figure
// of the results writes the same text as --json.
std::string json_number_text(double value);

}  // namespace cumemctl
