// Busy or broken (src/doctor/busy): which failures other processes may cause, and a process's age from /proc.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "doctor/busy.hpp"
#include "util/duration.hpp"

using namespace cumemctl;
using namespace cumemctl::doctor;

namespace {

// A failed outcome whose driver call ended with `code` (its name a decoy: the judgement reads the code).
CheckOutcome failed_with(CUresult code) {
    CheckOutcome o = CheckOutcome::fail("x", "y");
    o.driver = DriverFailure{"cuMemCreate", static_cast<int>(code), "CUDA_ERROR_NAME_IS_NOT_READ", "text"};
    return o;
}

}  // namespace

TEST_CASE("may_be_held: device memory or an exclusive-process context, never host memory or another error") {
    CHECK(may_be_held("vmm", failed_with(CUDA_ERROR_OUT_OF_MEMORY)));
    CHECK(may_be_held("context", failed_with(CUDA_ERROR_DEVICE_UNAVAILABLE)));
    CHECK_FALSE(may_be_held("host-alloc", failed_with(CUDA_ERROR_OUT_OF_MEMORY)));
    CHECK_FALSE(may_be_held("vmm", failed_with(CUDA_ERROR_INVALID_VALUE)));
    CHECK_FALSE(may_be_held("vmm", CheckOutcome::fail("no driver call", "")));
    CheckOutcome warned = failed_with(CUDA_ERROR_OUT_OF_MEMORY);
    warned.status = CheckStatus::warn;
    CHECK_FALSE(may_be_held("vmm", warned));
}

TEST_CASE("process_age_seconds: the start time of /proc/PID/stat against /proc/uptime, and why not") {
    char dir[] = "/tmp/cumemctl-proc-XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    const std::string proc = dir;
    REQUIRE(mkdir((proc + "/77").c_str(), 0700) == 0);
    // A command name with spaces and a parenthesis: the fields count from the last ')'.
    std::ofstream(proc + "/77/stat") << "77 (my (odd) job) S 1 77 77 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 "
                                     << 50 * sysconf(_SC_CLK_TCK) << " 0 0\n";
    std::string why;
    CHECK_FALSE(process_age_seconds(proc, 77, &why).has_value());
    CHECK(why.find("/uptime cannot be read") != std::string::npos);
    std::ofstream(proc + "/uptime") << "7250.50 100.00\n";
    const auto age = process_age_seconds(proc, 77, &why);
    REQUIRE(age.has_value());
    CHECK(*age == doctest::Approx(7200.5));
    CHECK(format_age(*age) == "2 h");
    CHECK_FALSE(process_age_seconds(proc, 78, &why).has_value());
    CHECK(why.find("/78/stat cannot be read (in a container") != std::string::npos);
    std::ofstream(proc + "/77/stat") << "77 (short) S 1 77\n";
    CHECK_FALSE(process_age_seconds(proc, 77, &why).has_value());
    CHECK(why.find("fewer fields") != std::string::npos);
    CHECK(std::system(("rm -rf " + proc).c_str()) == 0);
}
