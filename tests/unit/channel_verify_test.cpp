// imex-setup --verify: a second cumemctl (the built binary) loads the fake driver and makes a fabric
// allocation, refused without an IMEX channel; the arguments carry the owner; a child that gives no
// answer is reported, and one that hangs is a timeout.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "base/setting.hpp"
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
    CHECK(fabric_verify_arguments(r)[0] == command_name(Command::imex_verify));
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

TEST_CASE("a verification process that hangs past its time is a timeout, killed, not a lost answer") {
    char dir[] = "/tmp/cumemctl-verify-XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    const std::string script = std::string(dir) + "/hangs";
    {
        std::ofstream out(script);
        out << "#!/bin/sh\nexec sleep 30\n";
    }
    REQUIRE(chmod(script.c_str(), 0700) == 0);
    FabricVerifyRequest r = verify_request_for_test();
    r.executable = script;
    r.timeout = 200ms;
    const auto started = std::chrono::steady_clock::now();
    const FabricVerifyResult got = verify_fabric_in_child(r);
    CHECK(std::chrono::steady_clock::now() - started < 10s);
    REQUIRE(got.problem.has_value());
    CHECK(got.problem->message == "the verification did not finish within 0.2 s");
    CHECK(got.problem->remedy == "the driver hangs; check dmesg and nvidia-smi");
    std::remove(script.c_str());
    rmdir(dir);
}
