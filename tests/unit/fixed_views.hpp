// A result whose views are given as they are: what a renderer's test draws without running a command.
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/results.hpp"

// Views set by the test; the results' JSON is an empty object. `Base` is the result type the renderer
// under test also asks for (doctor's, for JUnit and NFD), or Results alone.
template <class Base = cumemctl::Results>
struct FixedViews final : Base {
    std::vector<cumemctl::Table> fixed_tables;
    std::string fixed_text;
    std::string fixed_line;
    std::vector<cumemctl::Metric> fixed_metrics;

    using Base::Base;
    nlohmann::json to_json() const override {
        if constexpr (std::is_same_v<Base, cumemctl::Results>) {
            return nlohmann::json::object();
        } else {
            return Base::to_json();
        }
    }
    std::vector<cumemctl::Table> tables(const cumemctl::Report&) const override { return fixed_tables; }
    std::string text() const override { return fixed_text; }
    std::string line() const override { return fixed_line; }
    std::vector<cumemctl::Metric> metrics(const cumemctl::Report&) const override { return fixed_metrics; }
};
