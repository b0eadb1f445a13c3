// imex-setup --verify: a second cumemctl (the built binary) loads the fake driver and makes a fabric
// allocation, refused without an IMEX channel; the arguments carry the owner; a child that gives no
// answer is reported.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>

#include "gpu/diagnosis/channel_verify.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;
using namespace cumemctl::imex;
using namespace std::chrono_literals;

namespace {

FabricVerifyRequest verify_request_for_test() {
    FabricVerifyRequest r;
    r.executable = CUMEMCTL_BINARY;
    r.libcuda = FAKECUDA_LIBRARY;
    r.device = "0";
    r.imex_channel_dir = "/nonexistent/nvidia-caps-imex-channels";
    r.timeout = 20000ms;
    return r;
}

}  // namespace

TEST_CASE("--verify without an IMEX channel comes back with the child's steps and the diagnosis") {
    // The child inherits the environment: the profile (kept as other tests set it) and the channel folder.
    const char* profile = std::getenv("FAKECUDA_PROFILE");
    const std::string old_profile = profile != nullptr ? profile : "";
    ::setenv("FAKECUDA_PROFILE", FAKECUDA_PROFILES "/h200.json", 1);
    ::setenv("FAKECUDA_IMEX_DIR", "/nonexistent/nvidia-caps-imex-channels", 1);
    const FabricVerifyResult r = verify_fabric_in_child(verify_request_for_test());
    ::unsetenv("FAKECUDA_IMEX_DIR");
    if (old_profile.empty()) {
        ::unsetenv("FAKECUDA_PROFILE");
    } else {
        ::setenv("FAKECUDA_PROFILE", old_profile.c_str(), 1);
    }
    CHECK_FALSE(r.ok);
    CHECK(r.uid == ::getuid());
    CHECK(r.driver.loaded);
    REQUIRE(r.problem.has_value());
    REQUIRE(r.problem->driver.has_value());
    CHECK(r.problem->driver->name == "CUDA_ERROR_NOT_PERMITTED");
    CHECK(r.problem->cause.find("/nonexistent/nvidia-caps-imex-channels") != std::string::npos);
    REQUIRE_FALSE(r.steps.empty());
    CHECK(r.steps.front().name == "load driver");
    CHECK(r.steps.back().name == "create");
    CHECK_FALSE(r.steps.back().ok);
    for (const auto& s : r.steps) CHECK(s.process == "verifier");
}

TEST_CASE("the verify arguments carry the owner to become") {
    FabricVerifyRequest r = verify_request_for_test();
    CHECK(fabric_verify_arguments(r)[0] == kImexVerifyCommand);
    r.as = Owner{65534, 65534, "nobody", "nogroup"};
    const auto args = fabric_verify_arguments(r);
    auto after = [&](const std::string& option) {
        for (std::size_t i = 0; i + 1 < args.size(); ++i)
            if (args[i] == option) return args[i + 1];
        return std::string("(absent)");
    };
    CHECK(after("--uid") == "65534");
    CHECK(after("--gid") == "65534");
    CHECK(after("--user") == "nobody");
    CHECK(after("--group") == "nogroup");
    CHECK(after("--socket-fd") == "3");
}

TEST_CASE("a verification process that gives no answer is reported, the library named") {
    FabricVerifyRequest r = verify_request_for_test();
    r.executable = "/bin/true";
    const FabricVerifyResult got = verify_fabric_in_child(r);
    CHECK_FALSE(got.ok);
    REQUIRE(got.problem.has_value());
    CHECK(got.problem->message.find("gave no answer") != std::string::npos);
    CHECK(got.driver.library == FAKECUDA_LIBRARY);
}
