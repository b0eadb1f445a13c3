#include <doctest/doctest.h>

#include "base/error.hpp"
#include "cuda/driver_call.hpp"

using namespace cumemctl;

TEST_CASE("Error(code, message, remedy) puts each where it belongs, and leaves the cause empty") {
    const Error e(ExitCode::usage, "bad size", "give 2MiB");
    CHECK(e.exit_code() == ExitCode::usage);
    CHECK(e.problem().message == "bad size");
    CHECK(e.problem().remedy == "give 2MiB");
    CHECK(e.problem().cause.empty());
    CHECK(std::string(e.what()) == "bad size");
}

TEST_CASE("a cause goes through Problem's designated initializers, in field order") {
    const Error e(Problem{.exit_code = ExitCode::unavailable,
                          .message = "no channel",
                          .cause = "the folder is empty",
                          .remedy = "run imex-setup",
                          .device = 2});
    CHECK(e.exit_code() == ExitCode::unavailable);
    CHECK(e.problem().cause == "the folder is empty");
    CHECK(e.problem().remedy == "run imex-setup");
    CHECK(e.problem().device == 2);
    CHECK_FALSE(e.problem().driver.has_value());
}

TEST_CASE("exit codes have their JSON names") {
    CHECK(exit_code_name(ExitCode::ok) == "ok");
    CHECK(exit_code_name(ExitCode::usage) == "usage");
    CHECK(exit_code_name(ExitCode::permission) == "permission");
}

TEST_CASE("a failure is told by its entry point and CUresult, not by the error's name") {
    // The name disagrees with the code: only the code may decide.
    const DriverFailure f{"cuMemCreate", static_cast<int>(CUDA_ERROR_OUT_OF_MEMORY), "CUDA_ERROR_INVALID_VALUE", "t"};
    CHECK(failed_at(f, "cuMemCreate"));
    CHECK_FALSE(failed_at(f, "cuMemMap"));
    CHECK_FALSE(failed_at(DriverFailure{"cuMemCreate_v2", 2, "", ""}, "cuMemCreate"));
    CHECK(result_of(f) == CUDA_ERROR_OUT_OF_MEMORY);
}
