// doctor's one-line summary (src/doctor/summary_line): the worst result, the count of the others, 70
// characters at most with the brief cut first.
#include <doctest/doctest.h>

#include <string>

#include "doctor/summary_line.hpp"

using namespace cumemctl;
using namespace cumemctl::doctor;

namespace {

CheckResult result(const char* check, std::optional<int> device, CheckOutcome outcome) {
    return CheckResult{check, device, std::move(outcome), 0.0};
}

}  // namespace

TEST_CASE("summary_line: pass counts the checks and GPUs; the worst of fail, busy, warn is named") {
    DoctorRun run;
    run.devices = {0, 1};
    // CUDA's 0 is nvidia-smi's 1 and the other way round: the line names nvidia-smi's (NVML's) index.
    run.identities = {gpu::DeviceIdentity{0, "GPU-a", "00000000:3B:00.0", 1u, {}, {}},
                      gpu::DeviceIdentity{1, "GPU-b", "00000000:1B:00.0", 0u, {}, {}}};
    run.results.push_back(result("driver", std::nullopt, CheckOutcome::pass("ok")));
    run.results.push_back(result("vmm", 1, CheckOutcome::skip("n/a")));
    CHECK(summary_line(run) == "cumemctl: pass 2 checks on 2 GPUs");
    run.quick = true;
    CHECK(summary_line(run) == "cumemctl: pass 2 checks on 2 GPUs quick");

    CheckOutcome warned = CheckOutcome::warn("pending", "reset");
    warned.brief = "row remap pending";
    run.results.push_back(result("memory-health", 0, warned));
    CHECK(summary_line(run) == "cumemctl: warn memory-health nvidia1 row remap pending");
    CheckOutcome busy = CheckOutcome::busy("held", "wait");
    busy.brief = "memory held by pid 4194242";
    run.results.push_back(result("context", 1, busy));
    CHECK(summary_line(run) == "cumemctl: busy context nvidia0 memory held by pid 4194242 (+1 more)");
    CheckOutcome failed = CheckOutcome::fail("x", "y");
    failed.driver = DriverFailure{"cuMemCreate", 2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"};
    run.results.push_back(result("vmm", 0, failed));
    CHECK(summary_line(run) == "cumemctl: fail vmm nvidia1 cuMemCreate OUT_OF_MEMORY (+2 more)");
    CHECK(brief_of(run.results.back()) == "cuMemCreate OUT_OF_MEMORY");
    // Without a brief or a driver call, the reason (a warning used to say only "warning").
    CHECK(brief_of(result("x", std::nullopt, CheckOutcome::warn("no channel node", "y"))) == "no channel node");
    CHECK(brief_of(result("x", std::nullopt, CheckOutcome::fail("", "y"))) == "failed");
}

TEST_CASE("summary_line: without NVML's index the GPU is its bus id, else its CUDA ordinal, said to be CUDA's") {
    DoctorRun run;
    run.devices = {0, 1};
    run.identities = {gpu::DeviceIdentity{0, "GPU-a", "00000000:3B:00.0", std::nullopt, {}, {}}};
    run.results.push_back(result("vmm", 0, CheckOutcome::fail("x", "y")));
    CHECK(summary_line(run) == "cumemctl: fail vmm 00000000:3B:00.0 x");
    run.results.back().device = 1;
    CHECK(summary_line(run) == "cumemctl: fail vmm cuda1 x");
}

TEST_CASE("summary_line: a long brief is cut to the width, the status, check, GPU and count kept") {
    DoctorRun run;
    CheckOutcome failed = CheckOutcome::fail("x", "y");
    failed.brief = std::string(100, 'b');
    run.results.push_back(result("posix-fd-ipc", 7, failed));
    run.results.push_back(result("ipc-pool", 7, CheckOutcome::warn("w", "r")));
    const std::string line = summary_line(run);
    CHECK(line.size() == kSummaryLineWidth);
    CHECK(line.rfind("cumemctl: fail posix-fd-ipc cuda7 bbb", 0) == 0);
    CHECK(line.substr(line.size() - 13) == "... (+1 more)");
}
