// The NVML seam (src/nvml) against the fake NVML (tests/fakenvml) loaded through dlopen, and the memory
// health verdict.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "nvml/memory_health.hpp"
#include "profile_file.hpp"
#include "nvml/nvml.hpp"

using namespace cumemctl::nvml;

namespace {

// A profile of two devices whose NVML figures differ, written to a temporary file; FAKECUDA_PROFILE names
// it while the object lives (the fake NVML reads it at nvmlInit_v2).
struct TwoDeviceProfile : testing_profile::ProfileFile {
    TwoDeviceProfile()
        : ProfileFile(nlohmann::json{
              {"driver_version", 13000},
              {"devices",
               {{{"name", "A"},
                 {"uuid", "00000000000000000000000000000001"},
                 {"total", 1000ULL << 20},
                 {"baseline_used", 10ULL << 20},
                 {"nvml", {{"reserved", 24ULL << 20}, {"used", 5ULL << 20}}}},
                {{"name", "B"},
                 {"uuid", "00000000000000000000000000000002"},
                 {"total", 2000ULL << 20},
                 {"baseline_used", 10ULL << 20},
                 {"nvml",
                  {{"remapped_rows", {{"corrected", 2}, {"uncorrected", 1}, {"pending", 1}, {"failure", 0}}},
                   {"ecc_uncorrected_aggregate", 3}}}}}}}) {}
};

const std::string kUuidA = "GPU-00000000-0000-0000-0000-000000000001";
const std::string kUuidB = "GPU-00000000-0000-0000-0000-000000000002";

}  // namespace

TEST_CASE("choose_libnvml: the explicit path, else CUMEMCTL_LIBNVML, else libnvidia-ml.so.1") {
    unsetenv("CUMEMCTL_LIBNVML");
    CHECK(choose_libnvml("") == "libnvidia-ml.so.1");
    setenv("CUMEMCTL_LIBNVML", "/x/libnvml.so", 1);
    CHECK(choose_libnvml("") == "/x/libnvml.so");
    CHECK(choose_libnvml("/y.so") == "/y.so");
    unsetenv("CUMEMCTL_LIBNVML");
}

TEST_CASE("a library that does not load says why and finds no device") {
    const Library nvml = Library::load("/nonexistent/libnvidia-ml.so.1");
    CHECK_FALSE(nvml.loaded());
    CHECK(nvml.info().error.find("cannot load /nonexistent/libnvidia-ml.so.1") == 0);
    std::string why;
    CHECK_FALSE(nvml.device_by_uuid(kUuidA, &why).has_value());
    CHECK(why == nvml.info().error);
}

TEST_CASE("devices are matched by UUID although NVML lists them in another order") {
    TwoDeviceProfile profile;
    const Library nvml = Library::load(FAKENVML_LIBRARY);
    REQUIRE(nvml.loaded());
    CHECK(nvml.info().driver_version == "580.159.04");
    // NVML's index 0 is the profile's (the driver's) last device.
    Device first = nullptr;
    REQUIRE(nvml.api().device_get_handle_by_index(0, &first) == kSuccess);
    char uuid[kUuidBufferSize] = {};
    REQUIRE(nvml.api().device_get_uuid(first, uuid, sizeof uuid) == kSuccess);
    CHECK(std::string(uuid) == kUuidB);

    const auto a = nvml.device_by_uuid(kUuidA);
    REQUIRE(a.has_value());
    const MemoryHealth h = query_memory_health(nvml, *a);
    CHECK(h.memory_v2);
    // The v2 total less the reserved memory is what cuDeviceTotalMem says (the profile's total).
    CHECK(*h.total - *h.reserved == 1000ULL << 20);
    CHECK(*h.reserved == 24ULL << 20);
    CHECK(*h.used == 15ULL << 20);
    CHECK(*h.free == *h.total - *h.reserved - *h.used);
    CHECK(*h.ecc_corrected_volatile == 0);
    // Only retired pages are missing: the profile's GPU remaps rows instead (Not Supported, as an H200).
    REQUIRE(h.unavailable.size() == 1);
    CHECK(h.unavailable.front().first == "retired_pages");
    CHECK_FALSE(h.retired_pages.has_value());
    CHECK(judge_memory_health(h).status == CheckStatus::pass);

    std::string why;
    CHECK_FALSE(nvml.device_by_uuid("GPU-ffffffff-0000-0000-0000-000000000009", &why).has_value());
    CHECK(why.find("NVML lists no device with UUID GPU-ffffffff") == 0);
}

TEST_CASE("memory health: a pending remap warns, a failed one or uncorrectable errors since reset fail") {
    TwoDeviceProfile profile;
    const Library nvml = Library::load(FAKENVML_LIBRARY);
    REQUIRE(nvml.loaded());
    MemoryHealth b = query_memory_health(nvml, *nvml.device_by_uuid(kUuidB));
    REQUIRE(b.remapped_rows.has_value());
    CHECK(b.remapped_rows->corrected == 2);
    CHECK(b.remapped_rows->uncorrected == 1);
    CHECK(b.remapped_rows->pending);
    CHECK(*b.ecc_uncorrected_aggregate == 3);
    CHECK(*b.ecc_uncorrected_volatile == 0);
    HealthVerdict v = judge_memory_health(b);
    CHECK(v.status == CheckStatus::warn);
    CHECK(v.reason.find("pending") != std::string::npos);

    b.remapped_rows->failure = true;
    CHECK(judge_memory_health(b).status == CheckStatus::fail);
    b.remapped_rows->failure = false;
    b.ecc_uncorrected_volatile = 1;
    v = judge_memory_health(b);
    CHECK(v.status == CheckStatus::fail);
    CHECK(v.reason == "1 uncorrectable ECC error since the last reset");

    const auto j = to_json(b);
    CHECK(j["remapped_rows"]["pending"] == true);
    CHECK(j["ecc"]["uncorrected_aggregate"] == 3);
    CHECK(j["memory_info"] == "v2");
}

TEST_CASE("an injected NVML error is reported with the call and NVML's words, the rest still answers") {
    TwoDeviceProfile profile;
    setenv("FAKENVML_INJECT", "nvmlDeviceGetRemappedRows:0=3,nvmlDeviceGetMemoryInfo_v2=15", 1);
    const Library nvml = Library::load(FAKENVML_LIBRARY);
    REQUIRE(nvml.loaded());
    const MemoryHealth a = query_memory_health(nvml, *nvml.device_by_uuid(kUuidA));
    CHECK_FALSE(a.remapped_rows.has_value());
    REQUIRE_FALSE(a.unavailable.empty());
    bool remap_reason = false;
    for (const auto& [field, why] : a.unavailable) {
        if (field == "remapped_rows") remap_reason = why == "nvmlDeviceGetRemappedRows: Not Supported (3)";
    }
    CHECK(remap_reason);
    // v2 failed: the v1 figures stand in, reserved unknown.
    CHECK_FALSE(a.memory_v2);
    CHECK(a.total.has_value());
    CHECK_FALSE(a.reserved.has_value());
    CHECK(judge_memory_health(a).reason.find("NVML gives no remapped rows") == 0);
    // Device B (ordinal 1) is not affected by the device-specific injection.
    CHECK(query_memory_health(nvml, *nvml.device_by_uuid(kUuidB)).remapped_rows.has_value());

    setenv("FAKENVML_INJECT", "nvmlInit_v2=9", 1);
    const Library broken = Library::load(FAKENVML_LIBRARY);
    CHECK_FALSE(broken.loaded());
    CHECK(broken.info().error == "nvmlInit_v2: Driver Not Loaded (9)");
}

TEST_CASE("an NVML without the optional entry points still finds devices; the figures say why not") {
    TwoDeviceProfile profile;
    const Library nvml = Library::load(FAKENVML_MINIMAL_LIBRARY);
    REQUIRE(nvml.loaded());
    CHECK(nvml.info().driver_version.empty());
    const MemoryHealth h = query_memory_health(nvml, *nvml.device_by_uuid(kUuidA));
    CHECK_FALSE(h.total.has_value());
    CHECK_FALSE(h.remapped_rows.has_value());
    CHECK(h.unavailable.size() == 7);
    CHECK(h.unavailable.front().second == "nvmlDeviceGetMemoryInfo: not in this NVML");
    std::string why;
    CHECK_FALSE(process_memory(nvml, *nvml.device_by_uuid(kUuidA), getpid(), &why).has_value());
    CHECK(why.find("not in this NVML") != std::string::npos);
}

TEST_CASE("process_memory finds this process where NVML lists it, and says why where it does not") {
    TwoDeviceProfile profile;
    const Library nvml = Library::load(FAKENVML_LIBRARY);
    REQUIRE(nvml.loaded());
    const Device a = *nvml.device_by_uuid(kUuidA);
    std::string why;
    CHECK_FALSE(process_memory(nvml, a, getpid(), &why).has_value());
    CHECK(why.find("does not list process") != std::string::npos);
    setenv("FAKENVML_SELF_USED", "1616904192", 1);
    CHECK(process_memory(nvml, a, getpid(), &why) == 1616904192ULL);
}

TEST_CASE("devices are looked up from several threads at once (doctor's per-device threads)") {
    TwoDeviceProfile profile;
    const Library nvml = Library::load(FAKENVML_LIBRARY);
    REQUIRE(nvml.loaded());
    std::vector<std::thread> threads;
    std::atomic<int> found{0};
    for (int i = 0; i < 8; ++i) {
        threads.emplace_back([&nvml, &found, i] {
            if (nvml.device_by_uuid(i % 2 == 0 ? kUuidA : kUuidB)) ++found;
        });
    }
    for (auto& t : threads) t.join();
    CHECK(found == 8);
}
