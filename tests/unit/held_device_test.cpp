// A GPU held by other processes (src/gpu/device/held_device), the one judgement every command uses: which
// failed calls another process may cause, from the CUresult and the entry point (never their names), and
// the verdict with the processes the fake NVML lists.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "gpu/device/held_device.hpp"
#include "profile_file.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;

namespace {

// A failed call: the name is a decoy, so that a judgement by name would be caught.
DriverFailure failed(const char* call, CUresult code) {
    return DriverFailure{call, static_cast<int>(code), "CUDA_ERROR_NAME_IS_NOT_READ", "text"};
}

// Two devices of 1000 MiB: the first with 960 MiB used by pid 4194242 and a second process of unknown memory;
// the second idle. Named by FAKECUDA_PROFILE while the object lives.
struct HeldProfile : testing_profile::ProfileFile {
    HeldProfile() : ProfileFile(profile()) {}
    static nlohmann::json profile() {
        const nlohmann::json busy{{"name", "A"},
                                  {"uuid", "00000000000000000000000000000001"},
                                  {"total", 1000ULL << 20},
                                  {"baseline_used", 960ULL << 20},
                                  {"nvml",
                                   {{"processes",
                                     {{{"pid", 4194242}, {"used", 900ULL << 20}, {"name", "/usr/bin/python3"}},
                                      {{"pid", 4343}, {"used", nullptr}}}}}}};
        const nlohmann::json idle{
            {"name", "B"}, {"uuid", "00000000000000000000000000000002"}, {"total", 1000ULL << 20}};
        return {{"driver_version", 13000}, {"devices", {busy, idle}}};
    }
};

const std::string kBusy = "GPU-00000000-0000-0000-0000-000000000001";
const std::string kIdle = "GPU-00000000-0000-0000-0000-000000000002";

}  // namespace

TEST_CASE("possible_hold: out of memory at a context or an allocation, an exclusive context; by CUresult and call") {
    CHECK(possible_hold(failed("cuDevicePrimaryCtxRetain", CUDA_ERROR_OUT_OF_MEMORY)) == HoldKind::memory);
    CHECK(possible_hold(failed("cuMemCreate", CUDA_ERROR_OUT_OF_MEMORY)) == HoldKind::memory);
    CHECK(possible_hold(failed("cuMemAllocFromPoolAsync", CUDA_ERROR_OUT_OF_MEMORY)) == HoldKind::memory);
    CHECK(possible_hold(failed("cuDevicePrimaryCtxRetain", CUDA_ERROR_DEVICE_UNAVAILABLE)) == HoldKind::exclusive);
    // A context refused with an unknown error may be a full device (the H200's driver says so then).
    CHECK(possible_hold(failed("cuDevicePrimaryCtxRetain", CUDA_ERROR_UNKNOWN)) == HoldKind::memory);
    CHECK_FALSE(possible_hold(failed("cuMemCreate", CUDA_ERROR_UNKNOWN)).has_value());
    // cuMemAddressReserve's out of memory is this process's address space, which no one else holds.
    CHECK_FALSE(possible_hold(failed("cuMemAddressReserve", CUDA_ERROR_OUT_OF_MEMORY)).has_value());
    CHECK_FALSE(possible_hold(failed("cuMemCreate", CUDA_ERROR_INVALID_VALUE)).has_value());
    CHECK(context_call(failed("cuDevicePrimaryCtxRetain", CUDA_ERROR_UNKNOWN)));
    CHECK_FALSE(context_call(failed("cuMemCreate", CUDA_ERROR_UNKNOWN)));
}

TEST_CASE("judge_held: the other processes NVML lists hold the device; this process's own are left out") {
    HeldProfile profile;
    const nvml::Library nvml = nvml::Library::load(FAKENVML_LIBRARY);
    REQUIRE(nvml.loaded());
    const DriverFailure oom = failed("cuDevicePrimaryCtxRetain", CUDA_ERROR_OUT_OF_MEMORY);
    HeldDevice held = judge_held(oom, &nvml, kBusy, {getpid()});
    CHECK(held.verdict == HeldDevice::Verdict::held);
    REQUIRE(held.holders.size() == 2);
    CHECK(holds_sentence(held) == "2 other processes hold the device's memory");
    CHECK(holders_sentence(held.holders) ==
          "pid 4194242 (python3) using 900 MiB; pid 4343 (NVML gives no memory figure)");
    held = judge_held(oom, &nvml, kBusy, {getpid(), 4343});
    REQUIRE(held.holders.size() == 1);
    CHECK(holds_sentence(held) == "another process holds the device's memory");
    CHECK(judge_held(oom, &nvml, kIdle, {getpid()}).verdict == HeldDevice::Verdict::no_other_process);
    const HeldDevice exclusive =
        judge_held(failed("cuDevicePrimaryCtxRetain", CUDA_ERROR_DEVICE_UNAVAILABLE), &nvml, kBusy, {getpid()});
    CHECK(holds_sentence(exclusive) == "2 other processes hold its exclusive-process context");
    CHECK(judge_held(failed("cuMemCreate", CUDA_ERROR_INVALID_VALUE), &nvml, kBusy, {}).verdict ==
          HeldDevice::Verdict::not_held);
}

TEST_CASE("judge_held: an unknown error at the context is a hold only on a device NVML shows all but full") {
    HeldProfile profile;
    const nvml::Library nvml = nvml::Library::load(FAKENVML_LIBRARY);
    const DriverFailure unknown = failed("cuDevicePrimaryCtxRetain", CUDA_ERROR_UNKNOWN);
    const HeldDevice full = judge_held(unknown, &nvml, kBusy, {getpid()});
    CHECK(full.verdict == HeldDevice::Verdict::held);
    CHECK(full.free_bytes == 40ULL << 20);
    const HeldDevice roomy = judge_held(unknown, &nvml, kIdle, {getpid()});
    CHECK(roomy.verdict == HeldDevice::Verdict::not_held);
    CHECK(roomy.free_bytes == 1000ULL << 20);
}

TEST_CASE("judge_held: without NVML, or where it cannot list, the holders are unknown and why is said") {
    HeldProfile profile;
    const DriverFailure oom = failed("cuMemCreate", CUDA_ERROR_OUT_OF_MEMORY);
    const HeldDevice none = judge_held(oom, nullptr, kBusy, {getpid()});
    CHECK(none.verdict == HeldDevice::Verdict::holders_unknown);
    CHECK(none.why == "NVML was not loaded");
    setenv("FAKENVML_INJECT", "nvmlDeviceGetComputeRunningProcesses_v3=4", 1);
    const nvml::Library nvml = nvml::Library::load(FAKENVML_LIBRARY);
    const HeldDevice denied = judge_held(oom, &nvml, kBusy, {getpid()});
    CHECK(denied.verdict == HeldDevice::Verdict::holders_unknown);
    CHECK(denied.why.find("Insufficient Permissions") != std::string::npos);
}

TEST_CASE("judge_held_problem: a held device is exit 3, kind busy, naming the holders; otherwise it stands") {
    HeldProfile profile;
    const nvml::Library nvml = nvml::Library::load(FAKENVML_LIBRARY);
    Problem p{.exit_code = ExitCode::failed,
              .message = "cuDevicePrimaryCtxRetain failed",
              .driver = failed("cuDevicePrimaryCtxRetain", CUDA_ERROR_OUT_OF_MEMORY)};
    p.driver->name = "CUDA_ERROR_OUT_OF_MEMORY";
    Problem idle = p;
    judge_held_problem(p, &nvml, kBusy, {getpid(), 4343});
    CHECK(p.exit_code == ExitCode::unavailable);
    CHECK(p.kind == ProblemKind::busy);
    CHECK(p.cause ==
          "another process holds the device's memory (cuDevicePrimaryCtxRetain failed: CUDA_ERROR_OUT_OF_MEMORY): "
          "pid 4194242 (python3) using 900 MiB");
    CHECK(p.remedy == kHeldRemedy);
    REQUIRE(p.held_by.size() == 1);
    CHECK(p.held_by[0].pid == 4194242);
    judge_held_problem(idle, &nvml, kIdle, {getpid()});
    CHECK(idle.exit_code == ExitCode::failed);
    CHECK(idle.kind == ProblemKind::by_exit_code);
    CHECK(idle.held_by.empty());
}
