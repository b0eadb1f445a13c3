// What a failed logical endpoint call means, its remedy naming the request's settings through
// setting_name: the core's words with no command running, le-bind's flags where it runs.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "gpu/diagnosis/imex_channel_access.hpp"
#include "gpu/le/logical_endpoint_diagnosis.hpp"
#include "running_command.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;
using testing_settings::RunningCommand;

namespace {

// le-bind running: its flags name the settings of its texts.
RunningCommand le_bind_flags() {
    return RunningCommand(Command::le_bind);
}

Problem explained(const std::string& call, CUresult result) {
    Problem p;
    explain_le_failure(p, DriverFailure{call, result, {}, {}});
    return p;
}

}  // namespace

TEST_CASE("explain_le_failure names the settings in the core's words, or in the running command's flags") {
    const RunningCommand core_words;
    const Problem core = explained("cuMemCreate", CUDA_ERROR_NOT_SUPPORTED);
    CHECK(core.remedy == "try location device, or handle type none");
    {
        const RunningCommand flags = le_bind_flags();
        const Problem cmd = explained("cuMemCreate", CUDA_ERROR_NOT_SUPPORTED);
        CHECK(cmd.remedy == "try --location device, or --handle-type none");
        CHECK(cmd.cause == core.cause);
        CHECK(explained("cuMemCreate", CUDA_ERROR_OUT_OF_MEMORY).remedy ==
              "use a smaller --size, or free memory on the device");
    }
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
        const Problem p = explained(call, result);
        CHECK_FALSE(p.remedy.empty());
        // The IMEX remedy is imex-setup's command line, the one way to make a channel; the rest is the core's.
        const std::string imex = read_channel_access().remedy();
        const bool about_imex = p.remedy.rfind(imex, 0) == 0;
        CHECK(about_imex == (result == CUDA_ERROR_NOT_PERMITTED));
        CHECK(p.remedy.find("--", about_imex ? imex.size() : 0) == std::string::npos);
    }
    CHECK(explained("cuMemCreate", CUDA_ERROR_OUT_OF_MEMORY).remedy ==
          "use a smaller endpoint size, or free memory on the device");
}

TEST_CASE("le_diagnoser explains a failed call once, naming the settings as the running command spells them") {
    const RunningCommand flags = le_bind_flags();
    Problem p;
    p.driver = DriverFailure{"cuMemCreate", CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "not supported"};
    le_diagnoser()(p);
    CHECK(p.remedy == "try --location device, or --handle-type none");
    Problem no_call;
    le_diagnoser()(no_call);
    CHECK(no_call.remedy.empty());
}
