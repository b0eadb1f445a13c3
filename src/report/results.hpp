// A command's answer as a C++ type: what it found, as every renderer takes it. Each type writes its
// JSON (the report's "results" member) in one place, its to_json.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace cumemctl {

class Results {
public:
    virtual ~Results() = default;
    // The report's "results" member.
    virtual nlohmann::json to_json() const = 0;
};

// A real number as the report's JSON writes it ("0.5", "52.0", "1e-05"): a renderer that shows a figure
// of the results writes the same text as --json.
std::string json_number_text(double value);

}  // namespace cumemctl
