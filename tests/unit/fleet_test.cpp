#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "fleet/fleet.hpp"

using namespace cumemctl::fleet;

namespace {

// A doctor report of `host` with the given driver and check statuses.
std::string doctor_report(const std::string& host, const std::string& driver, const std::string& status,
                          const std::string& checks) {
    return R"({"schema": "cumemctl.report", "command": "doctor", "host": ")" + host +
           R"(", "timestamp": "2026-11-29T10:00:00Z", "ok": true, "tool": {"version": "0.1.0"},
             "driver": {"loaded": true, "version_string": ")" +
           driver + R"("},
             "results": {"status": ")" +
           status + R"(", "device_count": 1, "checks": [)" + checks + "]}}";
}

const char* kPass = R"({"check": "driver", "device": null, "status": "pass", "details": {"kernel_module": "580.1"}})";
const char* kWarn = R"({"check": "imex-channels", "device": null, "status": "warn"})";
// CUDA's device 2 is nvidia-smi's 0.
const char* kFail = R"({"check": "context", "device": 2, "nvml_index": 0, "status": "fail"})";

}  // namespace

TEST_CASE("several reports in one input, whitespace between or none") {
    std::istringstream in(doctor_report("a", "13.0", "pass", kPass) + "\n" + doctor_report("b", "13.0", "pass", kPass) +
                          doctor_report("c", "12.4", "pass", kPass) + "\n\n");
    std::vector<InputProblem> problems;
    const auto reports = read_reports(in, "all.json", problems);
    CHECK(problems.empty());
    REQUIRE(reports.size() == 3);
    CHECK(reports[2].report["host"] == "c");
    CHECK(reports[0].source == "all.json");
}

TEST_CASE("a broken document ends the input; a foreign one is skipped; an empty input is a problem") {
    const std::string text = R"({"x": 1} )" + doctor_report("a", "13.0", "pass", kPass) + " {b";
    std::istringstream in(text);
    std::vector<InputProblem> problems;
    const auto reports = read_reports(in, "f", problems);
    CHECK(reports.size() == 1);
    REQUIRE(problems.size() == 2);
    CHECK(problems[0].message.find("document 1: not a cumemctl report") == 0);
    // Placed by line and column in the input, without the JSON library's words.
    const std::size_t newline = text.rfind('\n');
    CHECK(problems[1].message == fmt::format("not JSON at line {}, column {}",
                                             1 + std::count(text.begin(), text.end(), '\n'),
                                             text.size() - (newline == std::string::npos ? 0 : newline + 1)));
    std::istringstream lines("\n\n  {\"a\":\n  ]");
    read_reports(lines, "l", problems);
    CHECK(problems.back().message == "not JSON at line 4, column 3");
    std::istringstream cut("{\"x\":1\n");
    read_reports(cut, "c", problems);
    CHECK(problems.back().message == "not JSON at line 2, column 1");
    std::istringstream empty("  \n");
    read_reports(empty, "e", problems);
    CHECK(problems.back().message == "it is empty: no report in it");
}

TEST_CASE("the summary: statuses, failing checks by device, and the minority's differences") {
    std::vector<SourcedReport> reports;
    for (const char* h : {"n1", "n2", "n3"})
        reports.push_back({"x", nlohmann::json::parse(doctor_report(h, "13.0", "pass", kPass))});
    reports.push_back(
        {"y", nlohmann::json::parse(doctor_report("n4", "12.4", "fail", std::string(kWarn) + "," + kFail))});
    const FleetSummary s = summarise(reports);
    REQUIRE(s.nodes.size() == 4);
    CHECK(s.nodes[3].host == "n4");
    CHECK(s.nodes[3].status == NodeStatus::fail);
    CHECK(s.nodes[3].failed == std::vector<std::string>{"context@nvidia0"});  // nvidia-smi's index
    CHECK(s.nodes[3].warned == std::vector<std::string>{"imex-channels"});
    REQUIRE(s.checks.size() == 2);
    CHECK(s.checks[0].check == "context");
    CHECK(s.checks[0].failing == std::vector<std::string>{"n4"});
    CHECK(any_failing(s));
    REQUIRE(s.differences.size() == 1);
    CHECK(s.differences[0].property == "driver");
    CHECK(s.differences[0].majority == "13.0");
    CHECK(s.differences[0].majority_nodes == 3);
    CHECK(s.differences[0].differing == std::vector<std::pair<std::string, std::string>>{{"n4", "12.4"}});
}

TEST_CASE("a tie has no majority and lists every node") {
    std::vector<SourcedReport> reports{{"a", nlohmann::json::parse(doctor_report("n1", "13.0", "pass", kPass))},
                                       {"b", nlohmann::json::parse(doctor_report("n2", "12.4", "pass", kPass))}};
    const FleetSummary s = summarise(reports);
    REQUIRE(s.differences.size() == 1);
    CHECK(s.differences[0].majority.empty());
    CHECK(s.differences[0].differing.size() == 2);
    CHECK_FALSE(any_failing(s));
}

TEST_CASE("only doctor and devices reports make nodes: a host with none of them is no node, not a crash") {
    // read_reports lets fabric-matrix reports through (matrix/matrix reads them), and summarise may be
    // given any report: neither may make a node without a doctor or devices report behind it.
    std::vector<SourcedReport> reports{
        {"m", nlohmann::json::parse(R"({"schema": "cumemctl.report", "command": "fabric-matrix", "host": "m1",
                                       "results": {"mode": "rank"}})")},
        {"p", nlohmann::json::parse(R"({"schema": "cumemctl.report", "command": "pool-stats", "host": "p1"})")},
        {"q", nlohmann::json::parse(R"({"schema": "cumemctl.report", "command": 5, "host": ["q1"]})")},
        {"d", nlohmann::json::parse(doctor_report("n1", "13.0", "pass", kPass))}};
    const FleetSummary s = summarise(reports);
    CHECK(s.reports == 4);
    REQUIRE(s.nodes.size() == 1);
    CHECK(s.nodes[0].host == "n1");
    CHECK(s.nodes[0].status == NodeStatus::pass);
    CHECK_FALSE(any_failing(s));
}

TEST_CASE("a report whose schema or command is not text is an input problem") {
    std::istringstream in(R"({"schema": "cumemctl.report", "command": 5} {"schema": 1, "command": "doctor"} )" +
                          doctor_report("a", "13.0", "pass", kPass));
    std::vector<InputProblem> problems;
    const auto reports = read_reports(in, "f", problems);
    REQUIRE(reports.size() == 1);
    CHECK(reports[0].report["host"] == "a");
    REQUIRE(problems.size() == 2);
    CHECK(problems[0].message ==
          "document 1: a cumemctl report without a \"command\" that names the command it came from");
    CHECK(problems[1].message.find("document 2: not a cumemctl report") == 0);
}

TEST_CASE("a device's check names its GPU as nvidia-smi -i finds it: NVML's index, else the bus id, else cudaN") {
    const std::string checks =
        R"({"check": "vmm", "device": 1, "nvml_index": 2, "pci_bus_id": "00000000:3B:00.0", "status": "fail"},
           {"check": "vmm", "device": 3, "pci_bus_id": "00000000:5B:00.0", "status": "fail"},
           {"check": "vmm", "device": 4, "status": "fail"})";
    const FleetSummary s = summarise({{"x", nlohmann::json::parse(doctor_report("n1", "13.0", "fail", checks))}});
    REQUIRE(s.nodes.size() == 1);
    CHECK(s.nodes[0].failed == std::vector<std::string>{"vmm@nvidia2", "vmm@00000000:5B:00.0", "vmm@cuda4"});
}

TEST_CASE("a node's status keeps doctor's order, with fleet's own states among them") {
    using cumemctl::doctor::CheckStatus;
    using cumemctl::doctor::status_severity;
    const CheckStatus verdicts[] = {CheckStatus::pass, CheckStatus::warn, CheckStatus::busy, CheckStatus::timeout,
                                    CheckStatus::fail};
    for (const CheckStatus a : verdicts) {
        for (const CheckStatus b : verdicts) {
            CHECK((status_severity(a) < status_severity(b)) ==
                  (node_severity(node_status(a)) < node_severity(node_status(b))));
        }
    }
    CHECK(node_severity(NodeStatus::unknown) < node_severity(NodeStatus::pass));
    CHECK(node_severity(NodeStatus::busy) < node_severity(NodeStatus::stale));
    CHECK(node_severity(NodeStatus::stale) < node_severity(NodeStatus::missing));
    CHECK(node_severity(NodeStatus::missing) < node_severity(NodeStatus::error));
    CHECK(node_severity(NodeStatus::error) < node_severity(NodeStatus::timeout));
    CHECK(node_statuses_worst_first().front() == NodeStatus::fail);
    CHECK(node_statuses_worst_first().back() == NodeStatus::unknown);
    // stale and worse fail the fleet; busy is a job and warn no failure.
    CHECK(node_fails(NodeStatus::stale));
    CHECK(node_fails(NodeStatus::error));
    CHECK(node_fails(NodeStatus::timeout));
    CHECK_FALSE(node_fails(NodeStatus::busy));
    CHECK_FALSE(node_fails(NodeStatus::unknown));
}

TEST_CASE("a doctor report's status is parsed once: doctor's words, else unknown") {
    CHECK(parse_node_status("fail") == NodeStatus::fail);
    CHECK(parse_node_status("busy") == NodeStatus::busy);
    CHECK(parse_node_status("timeout") == NodeStatus::timeout);
    CHECK(parse_node_status("pass") == NodeStatus::pass);
    CHECK(parse_node_status("skip") == NodeStatus::unknown);   // no run's status
    CHECK(parse_node_status("stale") == NodeStatus::unknown);  // fleet's word, never in a report
    CHECK(parse_node_status("") == NodeStatus::unknown);
    for (const NodeStatus s : node_statuses_worst_first()) {
        if (s != NodeStatus::stale && s != NodeStatus::missing && s != NodeStatus::error)
            CHECK(parse_node_status(node_status_name(s)) == s);
    }
}

TEST_CASE("a check whose status is not doctor's makes its node an error, not a guess") {
    std::vector<SourcedReport> reports{
        {"a", nlohmann::json::parse(
                  doctor_report("n1", "13.0", "pass", R"({"check": "vmm", "device": 0, "status": "broken"})"))},
        {"b", nlohmann::json::parse(
                  doctor_report("n2", "13.0", "busy", R"({"check": "vmm", "device": 0, "status": "busy"})"))}};
    const FleetSummary s = summarise(reports);
    REQUIRE(s.nodes.size() == 2);
    CHECK(s.nodes[0].status == NodeStatus::error);
    CHECK(s.nodes[0].error == "a malformed report: check 'vmm' has status 'broken'");
    CHECK(s.nodes[1].status == NodeStatus::busy);
    CHECK(s.nodes[1].warned == std::vector<std::string>{"vmm@cuda0"});
    CHECK(any_failing(s));
}
