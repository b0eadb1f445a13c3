// doctor's typed evidence: each type's JSON is what its field description names, and what doctor writes
// fleet reads back by name, the same values; a value of another type or out of range is refused by name.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <utility>

#include "doctor/check.hpp"
#include "doctor/evidence.hpp"
#include "fleet/fleet.hpp"

using namespace cumemctl;
using namespace cumemctl::doctor;
using cumemctl::fleet::FleetInputs;
using cumemctl::fleet::NodeReport;

namespace {

// A doctor report of host "n1" with the given checks' JSON.
std::string report_of(const std::string& checks) {
    return R"({"schema": "cumemctl.report", "command": "doctor", "host": "n1", "timestamp": "2026-11-29T10:00:00Z",
               "ok": true, "tool": {"version": "0.1.0"}, "driver": {"loaded": true, "version_string": "13.0"},
               "results": {"status": "warn", "device_count": 1, "checks": [)" +
           checks + "]}}";
}

// One check as doctor writes it, with `evidence`, on device 0 (none for node checks).
std::string check_json(const char* check, CheckStatus status, Evidence evidence, bool device = true) {
    CheckResult r;
    r.check = check;
    if (device) r.device = 0;
    r.outcome.status = status;
    r.outcome.evidence = std::move(evidence);
    return to_json(r).dump();
}

// The one report fleet reads of `checks`.
NodeReport read_back(const std::string& checks) {
    FleetInputs inputs;
    fleet::read_text(report_of(checks), "x", inputs);
    REQUIRE(inputs.reports.size() == 1);
    return std::move(inputs.reports.front());
}

// The names a type's field description gives, merged fields' beside their holder's.
template <class E>
std::set<std::string> described_names() {
    std::set<std::string> names;
    E e{};
    const auto visit = [&names](const auto& self, const char* name, auto& member) {
        using M = std::remove_cvref_t<decltype(member)>;
        if constexpr (requires { M::fields(member, [](const char*, auto&, auto...) {}); }) {
            if (*name == '\0') {
                M::fields(member, [&](const char* n, auto& m, auto...) { self(self, n, m); });
                return;
            }
        }
        names.insert(name);
    };
    E::fields(e, [&](const char* name, auto& member, auto...) { visit(visit, name, member); });
    return names;
}

}  // namespace

TEST_CASE("each evidence type writes no key that its field description does not name") {
    const auto one = [](const auto& e) {
        using E = std::remove_cvref_t<decltype(e)>;
        const nlohmann::json j = to_json(Evidence{e});
        const std::set<std::string> names = described_names<E>();
        for (const auto& item : j.items()) {
            const std::string key = item.key();  // not a structured binding: clang 14's CAPTURE cannot take one
            CAPTURE(key);
            // Merged types of other layers (NVML's memory health, the fabric, the survey, locality) write
            // their own keys; every other key is the description's.
            if (names.count(key) == 0) CHECK((names.count("") == 1));
        }
    };
    Evidence every[] = {NoEvidence{},           NvmlUnavailable{},      DriverEvidence{},    DevicesEvidence{},
                        CapabilitiesEvidence{}, MemoryHealthEvidence{}, FabricEvidence{},    CopyEvidence{},
                        PcieLinkEvidence{},     NvlinkEvidence{},       XidEvidence{},       ContextEvidence{},
                        EndpointsEvidence{},    LocalityEvidence{},     PeerEvidence{},      InventoryEvidence{},
                        ChannelsEvidence{},     ImexDomainEvidence{},   GpudirectEvidence{}, MemoryEvidence{},
                        HostAllocEvidence{},    PoolTrimEvidence{},     TimeoutEvidence{}};
    CHECK(std::size(every) == std::variant_size_v<Evidence>);
    for (const Evidence& e : every) std::visit(one, e);
}

TEST_CASE("a Maybe field is absent while empty, an optional one null") {
    DriverEvidence d{"libcuda.so.1", {}, {}, {}};
    nlohmann::json j = to_json(Evidence{d});
    CHECK(j == nlohmann::json{{"library", "libcuda.so.1"}});
    d.kernel_module = std::optional<std::string>();
    j = to_json(Evidence{d});
    CHECK(j.contains("kernel_module"));
    CHECK(j["kernel_module"].is_null());
}

TEST_CASE("driver and devices evidence read back by name") {
    DriverEvidence d{"libcuda.so.1", 13000, "13.0", std::optional<std::string>("580.65.06")};
    DevicesEvidence v{2, {}, std::vector<std::string>{"NVIDIA H200", "NVIDIA H100"}};
    const NodeReport r = read_back(check_json(kCheckDriver, CheckStatus::pass, d, false) + "," +
                                   check_json(kCheckDevices, CheckStatus::pass, v, false));
    CHECK(r.malformed.empty());
    CHECK(r.kernel_module == std::optional<std::string>("580.65.06"));
    CHECK(r.device_names == std::vector<std::string>{"NVIDIA H100", "NVIDIA H200"});  // sorted by fleet
}

TEST_CASE("capabilities, memory-health and fabric evidence give their GPU's uuid and capabilities back") {
    CapabilitiesEvidence caps;
    caps.device.name = "NVIDIA H200", caps.device.uuid = "GPU-caps", caps.compute_capability = "9.0";
    caps.device.capabilities = {gpu::Capability{"vmm", "VMM", 0, 1, 0}, gpu::Capability{"fabric", "fabric", 0, 0, 0},
                                gpu::Capability{"multicast", "multicast", 0, std::nullopt, 0}};
    MemoryHealthEvidence health;
    health.uuid = "GPU-health";
    FabricEvidence fabric;
    fabric.uuid = "GPU-fabric";
    const NodeReport r = read_back(check_json(kCheckCapabilities, CheckStatus::warn, caps) + "," +
                                   check_json(kCheckMemoryHealth, CheckStatus::pass, health) + "," +
                                   check_json(kCheckFabric, CheckStatus::fail, fabric));
    CHECK(r.malformed.empty());
    REQUIRE(r.checks.size() == 3);
    CHECK(r.checks[0].details_uuid == "GPU-caps");
    CHECK(r.checks[1].details_uuid == "GPU-health");
    CHECK(r.checks[2].details_uuid == "GPU-fabric");
    REQUIRE(r.shared_capabilities != nullptr);
    const fleet::Capabilities expected{{"fabric", {"no"}}, {"multicast", {"unknown"}}, {"vmm", {"yes"}}};
    CHECK(*r.shared_capabilities == expected);
}

TEST_CASE("a copy check's figures, limit and sums at once read back by name") {
    CopyEvidence e;
    e.limit_gbps = Gbps{63.0};
    e.figures.h2d_gbps = Gbps{55.5};
    e.figures.d2h_gbps = Gbps{52.25};
    e.h2d_ratio = 0.88;  // written, not read back
    AtOnceEvidence& at_once = e.at_once.emplace();
    at_once.gpus = GpuCount{4};
    at_once.h2d = AtOncePath{Gbps{40}, Gbps{160.5}, Gbps{40}};
    at_once.d2h = AtOncePath{Gbps{38}, Gbps{150.0}, Gbps{38}};
    CopyEvidence d;
    d.limit_gbps = Gbps{4800};
    d.figures.d2d_gbps = Gbps{3900.5};
    const NodeReport r = read_back(check_json(kCheckHostBandwidth, CheckStatus::pass, e) + "," +
                                   check_json(kCheckMemoryBandwidth, CheckStatus::pass, d));
    CHECK(r.malformed.empty());
    REQUIRE(r.bandwidth.size() == 5);
    const auto at = [&r](std::size_t i) { return std::make_tuple(r.bandwidth[i].path, r.bandwidth[i].gbps); };
    CHECK(at(0) == std::make_tuple(std::string("d2h"), 52.25));
    CHECK(at(1) == std::make_tuple(std::string("h2d"), 55.5));
    CHECK(at(2) == std::make_tuple(std::string("d2h_all"), 150.0));
    CHECK(at(3) == std::make_tuple(std::string("h2d_all"), 160.5));
    CHECK(at(4) == std::make_tuple(std::string("d2d"), 3900.5));
    CHECK(r.bandwidth[0].limit_gbps == 63.0);
    CHECK(r.bandwidth[2].limit_gbps == 4 * 63.0);
    CHECK(r.bandwidth[4].limit_gbps == 4800.0);
    CHECK(r.bandwidth_sums);
}

TEST_CASE("fleet refuses a read-back field of another type or out of range, by its name") {
    const auto why = [](const std::string& details, const char* check = "host-bandwidth") {
        return read_back(std::string(R"({"check": ")") + check + R"(", "device": 0, "status": "pass", "details": )" +
                         details + "}")
            .malformed;
    };
    CHECK(why(R"({"h2d_gbps": "fast"})") == "details.h2d_gbps is not a number");
    CHECK(why(R"({"d2d_gbps": 2e6})") == "details.d2d_gbps is 2000000, not a bandwidth");
    CHECK(why(R"({"limit_gbps": -1})") == "details.limit_gbps is -1, not a bandwidth");
    CHECK(why(R"({"at_once": {"gpus": 0.5}})") == "details.at_once.gpus is 0.5, not a GPU count");
    CHECK(why(R"({"at_once": [1]})") == "details.at_once is not an object");
    CHECK(why(R"({"h2d_gbps": 1, "h2d_gbps": 2})") == "\"h2d_gbps\" is given twice in one object");
    CHECK(why(R"({"kernel_module": 580})", "driver").starts_with("details.kernel_module: "));
    CHECK(why(R"({"names": "NVIDIA H200"})", "devices").starts_with("details.names: "));
    CHECK(why(R"({"uuid": 7})", "memory-health").starts_with("details.uuid: "));
    // Details given before the check's name are read once the name is known.
    CHECK(read_back(R"({"details": {"kernel_module": "580.1"}, "check": "driver", "device": null, "status": "pass"})")
              .kernel_module == std::optional<std::string>("580.1"));
    CHECK(read_back(R"({"details": {"h2d_gbps": -2}, "check": "host-bandwidth", "device": 0, "status": "pass"})")
              .malformed == "details.h2d_gbps is -2, not a bandwidth");
    // What fleet does not read is skipped unbuilt, whatever its type.
    CHECK(why(R"({"h2d_ratio": "x", "attempts": 5, "h2d_gbps": 50})") == "");
}
