// The logical endpoint core names a request's properties as the request's names do: the core's words
// by default, a command's options where it sets them; each text is formatted where it is made.
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

// A command's names: each property's key as an option.
LeNames le_words_test_options() {
    return LeNames{.endpoint_size = "--endpoint_size",
                   .offset = "--offset",
                   .mem_offset = "--mem_offset",
                   .bind_size = "--bind_size",
                   .location = "--location",
                   .handle_type = "--handle_type",
                   .counted_ops = "--counted_ops",
                   .by_address = "--by_address",
                   .limits_only = "--limits_only",
                   .timeout = "--timeout",
                   .devices = "--devices"};
}

}  // namespace

TEST_CASE("every logical endpoint property has its own name, in the core's words and in a command's") {
    const LeNames core;
    const LeNames options = le_words_test_options();
    std::set<std::string> words, flags;
    for (LeProperty p : kEveryLeProperty) {
        words.insert(core.of(p));
        flags.insert(options.of(p));
        CHECK(core.of(p).find("--") == std::string::npos);  // the core's words name no option
        CHECK(options.of(p).rfind("--", 0) == 0);
    }
    CHECK(words.size() == kEveryLeProperty.size());
    CHECK(flags.size() == kEveryLeProperty.size());
    CHECK(core.of(LeProperty::offset) == "endpoint offset");
    CHECK(options.of(LeProperty::mem_offset) == "--mem_offset");
}

TEST_CASE("explain_le_failure names the request's properties as the caller does") {
    Problem core;
    explain_le_failure(core, DriverFailure{"cuMemCreate", CUDA_ERROR_NOT_SUPPORTED, {}, {}});
    CHECK(core.remedy == "try location device, or handle type none");
    Problem cmd;
    explain_le_failure(cmd, DriverFailure{"cuMemCreate", CUDA_ERROR_NOT_SUPPORTED, {}, {}}, le_words_test_options());
    CHECK(cmd.remedy == "try --location device, or --handle_type none");
    CHECK(cmd.cause == core.cause);
    // Every explained remedy names no option in the core's words.
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
        explain_le_failure(p, DriverFailure{call, result, {}, {}});
        CHECK_FALSE(p.remedy.empty());
        CHECK(p.remedy.find("--") == std::string::npos);
    }
    Problem oom;
    explain_le_failure(oom, DriverFailure{"cuMemCreate", CUDA_ERROR_OUT_OF_MEMORY, {}, {}}, le_words_test_options());
    CHECK(oom.remedy == "use a smaller --endpoint_size, or free memory on the device");
}

TEST_CASE("le_diagnoser explains a failed call once, with the names it was given") {
    Problem p;
    p.driver = DriverFailure{"cuMemCreate", CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "not supported"};
    le_diagnoser(le_words_test_options())(p);
    CHECK(p.remedy == "try --location device, or --handle_type none");
    Problem no_call;
    le_diagnoser()(no_call);
    CHECK(no_call.remedy.empty());
}
