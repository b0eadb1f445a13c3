// fabric-matrix and NVLink domains: each card carries its GPU's cluster UUID and clique (older cards
// without them still read), and a pair that fails across two domains is diagnosed "nvlink-domain".
#include <doctest/doctest.h>

#include "matrix/pair_diagnosis.hpp"

using namespace cumemctl;
using namespace cumemctl::matrix;

namespace matrix_fabric_domain_test {

Card attached_card(int rank, const std::string& host, const std::string& cluster, unsigned clique) {
    Card c;
    c.run = "r";
    c.rank = rank;
    c.ranks = 2;
    c.host = host;
    c.size = 2 << 20;
    c.handle_type = "fabric";
    c.handle = std::string(128, '0');
    c.version = "1.0";
    c.driver_version = 13000;
    c.fabric_attached = !cluster.empty();
    c.fabric_cluster_uuid = cluster;
    c.fabric_clique = clique;
    return c;
}

const std::string kRackA = "dc6e40c4-a1b2-4c3d-9e8f-0123456789ab";
const std::string kRackB = "5e1f00d2-b3c4-4a5b-8c7d-6e5f40312011";

Problem import_failed() {
    return Problem{.exit_code = ExitCode::failed,
                   .message = "cuMemImportFromShareableHandle failed: CUDA_ERROR_INVALID_HANDLE",
                   .driver = DriverFailure{"cuMemImportFromShareableHandle", 400, "CUDA_ERROR_INVALID_HANDLE", "t"}};
}

}  // namespace matrix_fabric_domain_test

using namespace matrix_fabric_domain_test;

TEST_CASE("a card carries its NVLink domain; a card without one (an older cumemctl) reads as unknown") {
    const Card a = attached_card(0, "n1", kRackA, 32766);
    const Card back = parse_card(to_json(a).dump());
    CHECK(back.fabric_attached == true);
    CHECK(fabric_domain_of(back) == kRackA + ".32766");
    nlohmann::json old = to_json(a);
    old.erase("fabric_attached");
    old.erase("fabric_cluster_uuid");
    old.erase("fabric_clique");
    CHECK_FALSE(parse_card(old.dump()).fabric_attached.has_value());
    nlohmann::json bad = to_json(a);
    bad["fabric_cluster_uuid"] = "../../etc";
    CHECK_THROWS_WITH(parse_card(bad.dump()), "the card's fabric cluster UUID is not 8-4-4-4-12 lowercase hex");
    bad = to_json(a);
    bad["fabric_attached"] = "yes";
    CHECK_THROWS(parse_card(bad.dump()));
}

TEST_CASE("a pair failing across NVLink domains is diagnosed so; clique 32766 on two clusters is told apart") {
    const Card a = attached_card(0, "n1", kRackA, 32766);
    Cell c = failed_cell(a, attached_card(1, "n2", kRackB, 32766), import_failed(), true);
    CHECK(c.diagnosis == "nvlink-domain");
    CHECK(c.problem->cause.find("different NVLink domains: the GPU of rank 0 (n1) is in NVLink domain " + kRackA +
                                ".32766, the GPU of rank 1 (n2) is in NVLink domain " + kRackB + ".32766") == 0);
    CHECK(c.problem->cause.find("only the cluster UUID tells them apart") != std::string::npos);
    CHECK(c.problem->remedy.find("one NVLink domain") != std::string::npos);

    c = failed_cell(a, attached_card(1, "n2", kRackA, 7), import_failed(), true);
    CHECK(c.diagnosis == "nvlink-domain");
    CHECK(c.problem->cause.find("tells them apart") == std::string::npos);

    c = failed_cell(a, attached_card(1, "n2", "", 0), import_failed(), true);
    CHECK(c.diagnosis == "nvlink-domain");
    CHECK(c.problem->cause.find("rank 1 (n2) is not attached to a multi-node NVLink fabric") != std::string::npos);

    // One domain, or a card that cannot say: the diagnosis it had.
    CHECK(failed_cell(a, attached_card(1, "n2", kRackA, 32766), import_failed(), true).diagnosis == "imex-domain");
    Card unknown = attached_card(1, "n2", kRackB, 32766);
    unknown.fabric_attached.reset();
    CHECK(failed_cell(a, unknown, import_failed(), true).diagnosis == "imex-domain");
    // posix-fd handles do not cross nodes through the fabric.
    CHECK(failed_cell(a, attached_card(1, "n2", kRackB, 32766), import_failed(), false).diagnosis == "driver");
}
