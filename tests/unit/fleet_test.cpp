#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "fleet/fleet.hpp"
#include "util/hostlist.hpp"
#include "util/host.hpp"

using namespace cumemctl::fleet;

namespace {

// What fleet reads of one input's text.
FleetInputs read(const std::string& text, const std::string& source = "f") {
    FleetInputs inputs;
    read_text(text, source, inputs);
    return inputs;
}

// The summary of reports given one per input.
FleetSummary summary_of(const std::vector<std::string>& texts, const Expectations& expect = {}) {
    FleetInputs inputs;
    for (const auto& t : texts) read_text(t, "x", inputs);
    return summarise(inputs, expect);
}

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
    const FleetInputs in =
        read(doctor_report("a", "13.0", "pass", kPass) + "\n" + doctor_report("b", "13.0", "pass", kPass) +
                 doctor_report("c", "12.4", "pass", kPass) + "\n\n",
             "all.json");
    CHECK(in.problems.empty());
    REQUIRE(in.reports.size() == 3);
    CHECK(in.reports[2].host == "c");
    CHECK(in.sources[in.reports[0].source] == "all.json");
}

TEST_CASE("a broken document is placed by line and column; a foreign one is skipped; an empty input is a problem") {
    const std::string text = R"({"x": 1} )" + doctor_report("a", "13.0", "pass", kPass) + " {b";
    FleetInputs in = read(text);
    CHECK(in.reports.size() == 1);
    auto& problems = in.problems;
    REQUIRE(problems.size() == 2);
    CHECK(problems[0].message.find("document 1: not a cumemctl report") == 0);
    // Placed by line and column in the input, without the JSON library's words.
    const std::size_t newline = text.rfind('\n');
    CHECK(problems[1].message == fmt::format("not JSON at line {}, column {}",
                                             1 + std::count(text.begin(), text.end(), '\n'),
                                             text.size() - (newline == std::string::npos ? 0 : newline + 1)));
    read_text("\n\n  {\"a\":\n  ]", "l", in);
    CHECK(problems.back().message == "not JSON at line 4, column 3");
    read_text("{\"x\":1\n", "c", in);
    CHECK(problems.back().message == "not JSON at line 2, column 1");  // where the input ends
    read_text("  \n", "e", in);
    CHECK(problems.back().message == "it is empty: no report in it");
    CHECK(problems.back().source == "e");
}

TEST_CASE("the summary: statuses, failing checks by device, and the minority's differences") {
    std::vector<std::string> reports;
    for (const char* h : {"n1", "n2", "n3"}) reports.push_back(doctor_report(h, "13.0", "pass", kPass));
    reports.push_back(doctor_report("n4", "12.4", "fail", std::string(kWarn) + "," + kFail));
    const FleetSummary s = summary_of(reports);
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
    const FleetSummary s =
        summary_of({doctor_report("n1", "13.0", "pass", kPass), doctor_report("n2", "12.4", "pass", kPass)});
    REQUIRE(s.differences.size() == 1);
    CHECK(s.differences[0].majority.empty());
    CHECK(s.differences[0].differing.size() == 2);
    CHECK_FALSE(any_failing(s));
}

TEST_CASE("only doctor and devices reports make nodes: a host with none of them is no node, not a crash") {
    // The reader keeps fabric-matrix reports apart (matrix/matrix reads them): no report makes a node
    // without a doctor or devices report behind it.
    FleetInputs in = read(R"({"schema": "cumemctl.report", "command": "fabric-matrix", "host": "m1",
                              "results": {"mode": "rank"}}
                             {"schema": "cumemctl.report", "command": "pool-stats", "host": "p1"}
                             {"schema": "cumemctl.report", "command": 5, "host": ["q1"]})" +
                          doctor_report("n1", "13.0", "pass", kPass));
    CHECK(in.matrices.size() + in.unreadable_ranks.size() + in.rank_runs.take().size() == 1);
    CHECK(in.problems.size() == 2);
    const FleetSummary s = summarise(in);
    CHECK(s.reports == 2);
    REQUIRE(s.nodes.size() == 1);
    CHECK(s.nodes[0].host == "n1");
    CHECK(s.nodes[0].status == NodeStatus::pass);
    CHECK_FALSE(any_failing(s));
}

TEST_CASE("a report whose schema or command is not text is an input problem") {
    const FleetInputs in = read(R"({"schema": "cumemctl.report", "command": 5} {"schema": 1, "command": "doctor"} )" +
                                doctor_report("a", "13.0", "pass", kPass));
    const auto& problems = in.problems;
    REQUIRE(in.reports.size() == 1);
    CHECK(in.reports[0].host == "a");
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
    const FleetSummary s = summary_of({doctor_report("n1", "13.0", "fail", checks)});
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
    const FleetSummary s =
        summary_of({doctor_report("n1", "13.0", "pass", R"({"check": "vmm", "device": 0, "status": "broken"})"),
                    doctor_report("n2", "13.0", "busy", R"({"check": "vmm", "device": 0, "status": "busy"})")});
    REQUIRE(s.nodes.size() == 2);
    CHECK(s.nodes[0].status == NodeStatus::error);
    CHECK(s.nodes[0].error == "a malformed report: check 'vmm' has status 'broken'");
    CHECK(s.nodes[1].status == NodeStatus::busy);
    CHECK(s.nodes[1].warned == std::vector<std::string>{"vmm@cuda0"});
    CHECK(any_failing(s));
}

namespace {

// A doctor report of `host` dated `when`, with one check of `status` ("fail" or "pass").
std::string dated_report(const std::string& host, const std::string& when, const std::string& status) {
    return R"({"schema": "cumemctl.report", "command": "doctor", "host": ")" + host + R"(", "timestamp": ")" + when +
           R"(", "ok": true, "results": {"status": ")" + status +
           R"(", "checks": [{"check": "memory-health", "device": 0, "status": ")" + status + R"("}]}})";
}

std::string now_text(std::chrono::seconds offset = {}) {
    return cumemctl::utc_timestamp(std::chrono::system_clock::now() + offset);
}

}  // namespace

TEST_CASE("a host that is no host name is refused, naming it: host lists, commas, spaces, control characters") {
    for (const std::string host :
         {"gpu[001-512]", "gpu005,gpu006", "gpu 005", "gpu005\\u001b[2J", "", "-gpu1", "gpu\\u00e9"}) {
        const FleetInputs in = read(dated_report(host, "2026-11-29T10:00:00Z", "fail"));
        CAPTURE(host);
        CHECK(in.reports.empty());
        REQUIRE(in.problems.size() == 1);
        CHECK(in.problems[0].message.find("document 1: its host '") == 0);
    }
    CHECK(is_single_host("gpu005"));
    CHECK(is_single_host("node-7.cluster_a"));
    CHECK_FALSE(is_single_host(std::string(256, 'a')));
    // A host given twice: two readers could each take another one.
    const FleetInputs twice =
        read(R"({"schema": "cumemctl.report", "command": "doctor", "host": "gpu1", "host": "gpu2", "results": {}})");
    CHECK(twice.reports.empty());
    REQUIRE(twice.problems.size() == 1);
    CHECK(twice.problems[0].message == "document 1: it gives its \"host\" twice");
}

TEST_CASE("a second report, forged or old, never hides a failure") {
    using namespace std::chrono_literals;
    // Dated in the future: the node is an error (it fails), and the report an input problem.
    FleetInputs future;
    read_text(dated_report("gpu005", now_text(-60s), "fail"), "gpu005.json", future);
    read_text(dated_report("gpu005", "9999-12-31T00:00:00Z", "pass"), "forged.json", future);
    FleetSummary s = summarise(future);
    REQUIRE(s.nodes.size() == 1);
    CHECK(node_fails(s.nodes[0].status));
    REQUIRE(s.problems.size() == 1);
    CHECK(s.problems[0].source == "forged.json");
    CHECK(s.problems[0].message.find("dated 9999-12-31T00:00:00Z") != std::string::npos);
    // A newer passing report beside a failing one: the failure speaks, without an age limit and within one.
    const std::vector<std::string> two{dated_report("gpu005", now_text(-3600s), "fail"),
                                       dated_report("gpu005", now_text(-60s), "pass")};
    CHECK(summary_of(two).nodes[0].status == NodeStatus::fail);
    Expectations day;
    day.max_age_seconds = 86400;
    CHECK(summary_of(two, day).nodes[0].status == NodeStatus::fail);
    // Only where the failing report is older than the age allowed does the newer pass speak.
    Expectations minutes;
    minutes.max_age_seconds = 600;
    CHECK(summary_of(two, minutes).nodes[0].status == NodeStatus::pass);
}

TEST_CASE("a report whose time cannot be read is stale under an age limit") {
    Expectations day;
    day.max_age_seconds = 86400;
    const FleetSummary s = summary_of({dated_report("gpu1", "yesterday", "pass")}, day);
    REQUIRE(s.nodes.size() == 1);
    CHECK(s.nodes[0].status == NodeStatus::stale);
    CHECK(s.nodes[0].error.find("no time that can be read") != std::string::npos);
    CHECK(s.nodes[0].timestamp.empty());
    CHECK(summary_of({dated_report("gpu1", "yesterday", "pass")}).nodes[0].status == NodeStatus::pass);
}

TEST_CASE("a report of the wrong shape makes its node an error; a run's status never hides a check's") {
    const FleetSummary s = summary_of({
        dated_report("n1", "2026-11-29T10:00:00Z", "pass"),
        R"({"schema": "cumemctl.report", "command": "doctor", "host": "n2", "ok": "yes", "results": {}})",
        R"({"schema": "cumemctl.report", "command": "doctor", "host": "n3", "results": {"status": "pass",
            "checks": [{"check": "vmm", "status": "fail", "status": "pass"}]}})",
        R"({"schema": "cumemctl.report", "command": "doctor", "host": "n4", "results": {"status": "pass",
            "checks": [{"check": "vmm", "device": 0, "status": "fail"}]}})",
        R"({"schema": "cumemctl.report", "command": "doctor", "host": "n5", "results": {"status": "pass",
            "checks": [{"check": "vmm", "device": "zero", "status": "pass"}]}})",
    });
    REQUIRE(s.nodes.size() == 5);
    CHECK(s.nodes[0].status == NodeStatus::pass);
    CHECK(s.nodes[1].status == NodeStatus::error);
    CHECK(s.nodes[1].error == "a malformed report: ok: not true or false");
    CHECK(s.nodes[2].status == NodeStatus::error);
    CHECK(s.nodes[2].error == "a malformed report: \"status\" is given twice in one object");
    CHECK(s.nodes[3].status == NodeStatus::fail);  // its own "pass" is milder than its check
    CHECK(s.nodes[4].status == NodeStatus::error);
    CHECK(s.nodes[4].error == "a malformed report: checks[0]: not a number");
}

TEST_CASE("reading has limits: nesting, a document's size; after broken text the next line's report is read") {
    const std::string deep = std::string(200000, '[') + "\n" + dated_report("n1", "2026-11-29T10:00:00Z", "fail");
    FleetInputs in = read(deep);
    REQUIRE(in.problems.size() == 1);
    CHECK(in.problems[0].message == "not JSON at line 1, column 65");
    REQUIRE(in.reports.size() == 1);  // the report on the next line
    CHECK(in.reports[0].host == "n1");
    ReadLimits small;
    small.max_document_bytes = 1024;
    small.chunk_bytes = 64;
    FleetInputs big;
    const std::string padded = R"({"pad": ")" + std::string(4000, 'x') + R"("})";
    read_text(padded + "\n" + dated_report("n2", "2026-11-29T10:00:00Z", "fail") + "\n", "b", big, small);
    REQUIRE(big.problems.size() == 1);
    CHECK(big.problems[0].message == "document 1 at line 1, column 1 is larger than the 1 KiB a report may have");
    REQUIRE(big.reports.size() == 1);
    CHECK(big.reports[0].host == "n2");
    // Chunks smaller than a document: each document is read whole all the same.
    FleetInputs chunked;
    std::string many;
    for (int i = 0; i < 20; ++i) many += dated_report(fmt::format("n{}", i), "2026-11-29T10:00:00Z", "pass") + "\n";
    read_text(many, "m", chunked, small);
    CHECK(chunked.problems.empty());
    CHECK(chunked.reports.size() == 20);
}

namespace {

// A doctor report whose host-bandwidth check on GPU 0 measured `h2d` GB/s.
// `limit` is the path's limit the check held it against; `status` the check's.
std::string bandwidth_report(const std::string& host, const std::string& h2d, const std::string& limit = "63.0",
                             const std::string& status = "pass") {
    return doctor_report(host, "13.0", "pass",
                         R"({"check": "host-bandwidth", "device": 0, "uuid": "GPU-)" + host + R"(", "status": ")" +
                             status + R"(", "details": {"h2d_gbps": )" + h2d + R"(, "d2h_gbps": 55.0, "limit_gbps": )" +
                             limit + "}}");
}

}  // namespace

TEST_CASE("fleet lists the nodes far below the median of a path, a node's slowest GPU counting once") {
    std::vector<std::string> texts;
    for (int i = 0; i < 9; ++i) texts.push_back(bandwidth_report(fmt::format("gpu{:03}", i), "55.0"));
    texts.push_back(bandwidth_report("gpu100", "14.2"));  // nvbandwidth #6: a bad link
    texts.push_back(bandwidth_report("gpu101", "47.5"));  // 13.6% below: within the margin
    const FleetSummary s = summary_of(texts);
    REQUIRE(s.medians.size() == 2);
    CHECK(s.medians[0].path == "d2h");
    CHECK(s.medians[1].path == "h2d");
    CHECK(s.medians[1].gbps == doctest::Approx(55.0));
    CHECK(s.medians[1].nodes == 11);
    REQUIRE(s.slow.size() == 1);
    CHECK(s.slow[0].host == "gpu100");
    CHECK(s.slow[0].path == "h2d");
    CHECK(s.slow[0].slowest.gbps == doctest::Approx(14.2));
    CHECK(s.slow[0].slowest.uuid == "GPU-gpu100");

    Expectations wide;
    wide.slow_margin = 0.10;  // now 47.5 is slow too, slowest first
    const FleetSummary t = summary_of(texts, wide);
    REQUIRE(t.slow.size() == 2);
    CHECK(t.slow[0].host == "gpu100");
    CHECK(t.slow[1].host == "gpu101");
}

TEST_CASE("a bandwidth figure that is no measurement makes its node an error; one node has no median") {
    for (const char* bad : {"-1", "1e7", "\"fast\"", "null", "1e999"}) {
        CAPTURE(bad);
        const FleetSummary s = summary_of({bandwidth_report("a", bad), bandwidth_report("b", "55")});
        REQUIRE(s.nodes.size() == 2);
        CHECK(s.nodes[0].status == NodeStatus::error);
        CHECK(s.slow.empty());
    }
    const FleetSummary one = summary_of({bandwidth_report("a", "5")});
    CHECK(one.medians.empty());
    CHECK(one.slow.empty());
}

TEST_CASE("fleet compares a node only with nodes whose path has the same limit, and never a busy figure") {
    std::vector<std::string> texts;
    // Six PCIe Gen5 nodes at 55 GB/s and three Grace nodes at 380 GB/s over C2C: neither kind is slow.
    for (int i = 0; i < 6; ++i) texts.push_back(bandwidth_report(fmt::format("pcie{}", i), "55.0"));
    for (int i = 0; i < 3; ++i) texts.push_back(bandwidth_report(fmt::format("c2c{}", i), "380.0", "450.0"));
    // A busy node's figure is the other process's work, not the GPU's: it takes no part.
    texts.push_back(bandwidth_report("shared", "5.0", "63.0", "busy"));
    const FleetSummary s = summary_of(texts);
    CHECK(s.slow.empty());
    std::vector<std::pair<std::optional<double>, int>> h2d;
    for (const auto& m : s.medians) {
        if (m.path == "h2d") h2d.emplace_back(m.limit_gbps, m.nodes);
    }
    REQUIRE(h2d.size() == 2);
    CHECK(*h2d[0].first == doctest::Approx(63.0));
    CHECK(h2d[0].second == 6);
    CHECK(*h2d[1].first == doctest::Approx(450.0));
    CHECK(h2d[1].second == 3);
    // One Grace node at a third of its peers is slow among them, whatever the PCIe nodes measure.
    texts.push_back(bandwidth_report("c2c9", "120.0", "450.0"));
    const FleetSummary t = summary_of(texts);
    REQUIRE(t.slow.size() == 1);
    CHECK(t.slow[0].host == "c2c9");
    CHECK(t.slow[0].median == doctest::Approx(380.0));
}
