// The IMEX service model (src/imex/imex_service): its files, the domain of nvidia-imex-ctl -N -j and what
// doctor finds in it, and a bounded run of the stand-in nvidia-imex-ctl (tests/fakeimex).
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "imex/imex_service.hpp"

using namespace cumemctl::imex;

namespace imex_service_test {

const char* kDomain = R"({"nodes": {
  "0": {"status": "READY", "host": "10.0.0.1", "hostName": "gpu-1", "version": "580.95.05",
        "connections": {"0": {"host": "10.0.0.1", "status": "CONNECTED"}, "1": {"host": "10.0.0.2", "status": "INVALID"}}},
  "1": {"status": "UNAVAILABLE", "host": "10.0.0.2", "version": "570.172", "connections": {}}},
  "timestamp": "9/4/2026 00:37:39.905", "status": "DOWN"})";

// The stand-in's path (tests/fakeimex/nvidia-imex-ctl beside the fake driver's profiles).
std::string stand_in() {
    return std::string(FAKECUDA_PROFILES) + "/../../fakeimex/nvidia-imex-ctl";
}

}  // namespace imex_service_test

using namespace imex_service_test;

TEST_CASE("config.cfg: KEY=VALUE lines, comments skipped; the node file's default and the command service") {
    const ImexConfig c = parse_imex_config("# comment\nSERVER_PORT = 50000\nIMEX_CMD_ENABLED=1\nBIND_INTERFACE_IP=\n");
    CHECK(c.value("SERVER_PORT") == "50000");
    CHECK(c.command_service());
    CHECK(c.nodes_path() == "/etc/nvidia-imex/nodes_config.cfg");
    CHECK(c.value("BIND_INTERFACE_IP").empty());
    CHECK_FALSE(parse_imex_config("IMEX_CMD_ENABLED=0\n").command_service());
    CHECK(parse_imex_config("IMEX_NODE_CONFIG_FILE=/x/nodes\n").nodes_path() == "/x/nodes");
    const NodeList n = parse_node_list("10.0.0.1\n\n## placeholder\n 10.0.0.2 \n");
    CHECK(n.entries == std::vector<std::string>{"10.0.0.1", "10.0.0.2"});
    CHECK(n.skipped_lines == 1);
}

TEST_CASE("a node file entry names this node by address (compared as addresses) or by host name") {
    const std::vector<std::string> mine{"127.0.0.1", "::1", "10.1.2.3"};
    CHECK(names_this_node("10.1.2.3", mine, "h"));
    CHECK(names_this_node("0:0::1", mine, "h"));
    CHECK_FALSE(names_this_node("10.1.2.4", mine, "h"));
    CHECK(names_this_node("gpu-7", mine, "gpu-7.cluster"));
    CHECK_FALSE(names_this_node("gpu-8", mine, "gpu-7"));
    CHECK(is_numeric_address("fe80::1%eth0"));
    CHECK_FALSE(is_numeric_address("compute-domain-daemon-0000"));
    const auto here = local_addresses();
    CHECK(std::find(here.begin(), here.end(), "127.0.0.1") != here.end());
}

TEST_CASE("-N -j: the domain, each node, this node's connections and the versions, each finding naming its node") {
    std::string error;
    const auto domain = parse_domain_json(kDomain, &error);
    REQUIRE(domain.has_value());
    CHECK(domain->status == "DOWN");
    REQUIRE(domain->nodes.size() == 2);
    CHECK(domain->nodes[0].label() == "node #0 (gpu-1, 10.0.0.1)");
    const auto findings = judge_domain(*domain, {"10.0.0.1"}, "gpu-1", "580.95.05");
    std::vector<std::string> texts;
    for (const auto& f : findings) {
        CHECK(f.fail);
        texts.push_back(f.text);
    }
    REQUIRE(texts.size() == 4);
    CHECK(texts[0] == "the IMEX domain is DOWN");
    CHECK(texts[1] == "node #1 (10.0.0.2) is UNAVAILABLE");
    CHECK(texts[2] == "this node is not connected to node #1 (10.0.0.2): INVALID");
    CHECK(texts[3].find("node #1 (10.0.0.2) runs IMEX 570.172, this node runs 580.95.05") == 0);
    // This node's IMEX against its driver.
    const auto other = judge_domain(*domain, {"10.0.0.1"}, "gpu-1", "570.172.08");
    CHECK(other.back().text.find("its GPU driver is 570.172.08") != std::string::npos);
    CHECK_FALSE(parse_domain_json("READY\n", &error).has_value());
    CHECK_FALSE(parse_domain_json(R"({"status": "UP"})", &error).has_value());
}

TEST_CASE("an IMEX version matches the driver's branch at a dot") {
    CHECK(same_driver_branch("570.172", "570.172.08"));
    CHECK(same_driver_branch("580.95.05", "580.95.05"));
    CHECK_FALSE(same_driver_branch("570.17", "570.172.08"));
    CHECK_FALSE(same_driver_branch("", "580"));
}

TEST_CASE("nvidia-imex-ctl runs bounded: its output captured, a hang ended within the limit") {
    setenv("FAKE_IMEX_CTL_SCENARIO", "ready", 1);
    CtlAnswer q = run_imex_ctl(stand_in(), {"-q"}, kImexCtlQueryLimit);
    CHECK(q.exit_code == 0);
    CHECK(q.out == "READY\n");
    CHECK(q.first_line() == "READY");
    setenv("FAKE_IMEX_CTL_SCENARIO", "cmd-error", 1);
    q = run_imex_ctl(stand_in(), {"-q"}, kImexCtlQueryLimit);
    CHECK(q.exit_code == 1);
    CHECK(q.first_line().find("Query Status returned error code: 14") == 0);
    setenv("FAKE_IMEX_CTL_SCENARIO", "hang", 1);
    const auto start = std::chrono::steady_clock::now();
    q = run_imex_ctl(stand_in(), {"-q"}, cumemctl::ipc::Timeout(300));
    const auto took = std::chrono::steady_clock::now() - start;
    CHECK(q.timed_out);
    CHECK(took < std::chrono::seconds(2));
    q = run_imex_ctl("/nonexistent/nvidia-imex-ctl", {"-q"}, kImexCtlQueryLimit);
    CHECK_FALSE(q.error.empty());
    unsetenv("FAKE_IMEX_CTL_SCENARIO");
}
