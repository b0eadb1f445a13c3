#include <doctest/doctest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpu/le/logical_endpoint_diagnosis.hpp"
#include "gpu/le/logical_endpoint_words.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;

namespace {

const std::vector<LeProperty> kEveryLeProperty{
    LeProperty::endpoint_size, LeProperty::offset,      LeProperty::mem_offset,  LeProperty::bind_size,
    LeProperty::location,      LeProperty::handle_type, LeProperty::counted_ops, LeProperty::by_address,
    LeProperty::limits_only,   LeProperty::timeout,     LeProperty::devices};

// A command's names: the placeholder's key as an option ("{mem_offset}" -> "--mem_offset").
std::string words_test_option(LeProperty p) {
    const std::string key = le_placeholder(p);
    return "--" + key.substr(1, key.size() - 2);
}

}  // namespace

TEST_CASE("every logical endpoint property has its own placeholder and its own words") {
    std::set<std::string> placeholders, words;
    for (LeProperty p : kEveryLeProperty) {
        const std::string key = le_placeholder(p);
        CAPTURE(key);
        CHECK(key.front() == '{');
        CHECK(key.back() == '}');
        placeholders.insert(key);
        words.insert(le_property_words(p));
        // A placeholder is filled with the property's name, in the core's words or a command's.
        CHECK(le_remedy(key) == le_property_words(p));
        CHECK(le_remedy(key, words_test_option) == "--" + key.substr(1, key.size() - 2));
    }
    CHECK(placeholders.size() == kEveryLeProperty.size());
    CHECK(words.size() == kEveryLeProperty.size());
    // The core's words name no option.
    for (const std::string& w : words) CHECK(w.find("--") == std::string::npos);
}

TEST_CASE("le_remedy fills the placeholders and keeps every other text, braces included") {
    CHECK(le_remedy("use a smaller {endpoint_size}, or free memory") == "use a smaller endpoint size, or free memory");
    CHECK(le_remedy("try {location} device, or {handle_type} none", words_test_option) ==
          "try --location device, or --handle_type none");
    CHECK(le_remedy("{offset}{offset}") == "endpoint offsetendpoint offset");
    CHECK(le_remedy("a {word} that is no property, {offset}") == "a {word} that is no property, endpoint offset");
    CHECK(le_remedy("{{offset}}") == "{offset}}");  // "{{": a brace that literal() wrote
    CHECK(le_remedy("{{{offset}}") == "{endpoint offset}");
    CHECK(le_remedy("an open { and {offset") == "an open { and {offset");
    CHECK(le_remedy("") == "");
}

TEST_CASE("LeError says its remedy in the core's words and keeps it for a command's") {
    const LeError e(Problem{.exit_code = ExitCode::usage,
                            .message = "logical endpoints bind device or host-NUMA memory",
                            .cause = "a cause",
                            .remedy = "use {location} device"});
    CHECK(e.exit_code() == ExitCode::usage);
    CHECK(e.problem().remedy == "use location device");
    CHECK(std::string(e.what()) == "logical endpoints bind device or host-NUMA memory");
    const Problem p = e.in_words(words_test_option);
    CHECK(p.remedy == "use --location device");
    CHECK(p.message == e.problem().message);
    CHECK(p.cause == "a cause");
    CHECK(p.exit_code == ExitCode::usage);
}

TEST_CASE("explain_le_failure names the request's properties as the caller does") {
    Problem core;
    explain_le_failure(core, CUDA_ERROR_NOT_SUPPORTED, "cuMemCreate");
    CHECK(core.remedy == "try location device, or handle type none");
    Problem cmd;
    explain_le_failure(cmd, CUDA_ERROR_NOT_SUPPORTED, "cuMemCreate", words_test_option);
    CHECK(cmd.remedy == "try --location device, or --handle_type none");
    CHECK(cmd.cause == core.cause);
    // Every explained remedy is free of placeholders and options in the core's words.
    const std::vector<std::pair<CUresult, std::string>> failures{
        {CUDA_ERROR_OUT_OF_MEMORY, "cuMemCreate"},
        {CUDA_ERROR_OUT_OF_MEMORY, "cuLogicalEndpointBindMem"},
        {CUDA_ERROR_NOT_PERMITTED, "cuLogicalEndpointCreate"},
        {CUDA_ERROR_NOT_SUPPORTED, "cuLogicalEndpointCreate"},
        {CUDA_ERROR_INVALID_VALUE, "cuMemGetAllocationGranularity"},
        {CUDA_ERROR_INVALID_VALUE, "cuLogicalEndpointBindAddr"},
        {CUDA_ERROR_ILLEGAL_STATE, "cuLogicalEndpointQuery"}};
    for (const auto& failure : failures) {
        const CUresult result = failure.first;
        const std::string& call = failure.second;  // named: CAPTURE's lambda (clang < 16)
        CAPTURE(call);
        Problem p;
        explain_le_failure(p, result, call);
        CHECK_FALSE(p.remedy.empty());
        CHECK(p.remedy.find('{') == std::string::npos);
        CHECK(p.remedy.find("--") == std::string::npos);
    }
    Problem oom;
    explain_le_failure(oom, CUDA_ERROR_OUT_OF_MEMORY, "cuMemCreate", words_test_option);
    CHECK(oom.remedy == "use a smaller --endpoint_size, or free memory on the device");
}
