// The process listing of the NVML seam (src/nvml/processes) against the fake NVML loaded through dlopen:
// the v3 entry point, the v1 one where v3 is missing, names, memory NVML cannot give, and failures.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "gpu/device/held_device.hpp"
#include "nvml/memory_health.hpp"
#include "nvml/processes.hpp"
#include "profile_file.hpp"
#include "report/report.hpp"

using namespace cumemctl;
using namespace cumemctl::nvml;

namespace {

// A profile of one device with two foreign processes (one whose memory NVML cannot give) and one without,
// named by FAKECUDA_PROFILE while the object lives.
struct ProcessProfile : testing_profile::ProfileFile {
    ProcessProfile()
        : ProfileFile(nlohmann::json{
              {"driver_version", 13000},
              {"devices",
               {{{"name", "A"},
                 {"uuid", "00000000000000000000000000000001"},
                 {"total", 1000ULL << 20},
                 {"nvml",
                  {{"processes",
                    {{{"pid", 4194242}, {"used", 900ULL << 20}, {"name", "/usr/bin/python3"}},
                     {{"pid", 4343}, {"used", nullptr}}}}}}},
                {{"name", "B"}, {"uuid", "00000000000000000000000000000002"}, {"total", 1000ULL << 20}}}}}) {}
};

const std::string kBusyUuid = "GPU-00000000-0000-0000-0000-000000000001";
const std::string kIdleUuid = "GPU-00000000-0000-0000-0000-000000000002";

}  // namespace

TEST_CASE("list_processes: pid, name and memory of every compute process, from the v3 entry point") {
    ProcessProfile profile;
    const Library nvml = Library::load(FAKENVML_LIBRARY);
    REQUIRE(nvml.loaded());
    const ProcessList busy = list_processes(nvml, *nvml.device_by_uuid(kBusyUuid));
    REQUIRE(busy.listed);
    CHECK(busy.call == "nvmlDeviceGetComputeRunningProcesses_v3");
    REQUIRE(busy.processes.size() == 2);
    CHECK(busy.processes[0].pid == 4194242);
    CHECK(busy.processes[0].name == "/usr/bin/python3");
    CHECK(busy.processes[0].used == 900ULL << 20);
    CHECK(describe(busy.processes[0]) == "pid 4194242 (python3) using 900 MiB");
    // NVML lists the process but gives neither its name nor its memory.
    CHECK(busy.processes[1].name.empty());
    CHECK_FALSE(busy.processes[1].used.has_value());
    CHECK(describe(busy.processes[1]) == "pid 4343 (NVML gives no memory figure)");
    CHECK(to_json(busy.processes[1]) == nlohmann::json{{"pid", 4343}, {"name", nullptr}, {"used_bytes", nullptr}});
    CHECK(memory_used(busy.processes) == 900ULL << 20);

    const ProcessList idle = list_processes(nvml, *nvml.device_by_uuid(kIdleUuid));
    CHECK(idle.listed);
    CHECK(idle.processes.empty());
}

TEST_CASE("holders_of leaves this process out; its name is its executable") {
    ProcessProfile profile;
    setenv("FAKENVML_SELF_USED", "1048576", 1);
    const Library nvml = Library::load(FAKENVML_LIBRARY);
    REQUIRE(nvml.loaded());
    const ProcessList list = list_processes(nvml, *nvml.device_by_uuid(kBusyUuid));
    REQUIRE(list.processes.size() == 3);
    CHECK(list.processes[2].pid == static_cast<unsigned>(getpid()));
    CHECK_FALSE(list.processes[2].name.empty());
    const auto others = cumemctl::gpu::holders_of(&nvml, kBusyUuid, {getpid()}).holders;
    REQUIRE(others.size() == 2);
    CHECK(others[0].pid == 4194242);
    CHECK(others[1].pid == 4343);
    std::string why;
    CHECK(process_memory(nvml, *nvml.device_by_uuid(kBusyUuid), getpid(), &why) == 1048576ULL);
}

TEST_CASE("an NVML without the v3 entry point is asked through v1") {
    ProcessProfile profile;
    const Library loaded = Library::load(FAKENVML_LIBRARY);
    REQUIRE(loaded.loaded());
    Api api = loaded.api();
    api.device_get_compute_running_processes = nullptr;
    const Library nvml = Library::from_table(api);
    const ProcessList list = list_processes(nvml, *nvml.device_by_uuid(kBusyUuid));
    REQUIRE(list.listed);
    CHECK(list.call == "nvmlDeviceGetComputeRunningProcesses");
    REQUIRE(list.processes.size() == 2);
    CHECK(list.processes[0].used == 900ULL << 20);
    CHECK(list.processes[0].name == "/usr/bin/python3");
}

TEST_CASE("where NVML cannot list, the list says why; a failed name leaves the name empty") {
    ProcessProfile profile;
    setenv("FAKENVML_INJECT", "nvmlDeviceGetComputeRunningProcesses_v3:0=4,nvmlSystemGetProcessName=999", 1);
    const Library nvml = Library::load(FAKENVML_LIBRARY);
    REQUIRE(nvml.loaded());
    const ProcessList denied = list_processes(nvml, *nvml.device_by_uuid(kBusyUuid));
    CHECK_FALSE(denied.listed);
    CHECK(denied.why == "nvmlDeviceGetComputeRunningProcesses_v3: Insufficient Permissions (4)");
    CHECK(denied.processes.empty());

    const Library minimal = Library::load(FAKENVML_MINIMAL_LIBRARY);
    const ProcessList none = list_processes(minimal, *minimal.device_by_uuid(kBusyUuid));
    CHECK_FALSE(none.listed);
    CHECK(none.why == "nvmlDeviceGetComputeRunningProcesses_v3: not in this NVML");

    const Library absent = Library::load("/nonexistent/libnvidia-ml.so.1");
    CHECK(list_processes(absent, nullptr).why.find("cannot load /nonexistent") == 0);
}
