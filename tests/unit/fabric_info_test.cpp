// NVML's fabric info (src/nvml/fabric_info): the version fallback over a table of stand-in entry points,
// the health decoding (with the bandwidth width NVML fixed in 12.8), "attached" and the verdicts.
#include <doctest/doctest.h>

#include <cstring>

#include "nvml/fabric_info.hpp"

using namespace cumemctl::nvml;

namespace fabric_info_test {

// What the stand-in entry points answer, and which versions they were asked for.
struct Answer {
    Return v_result = kSuccess;
    bool accept_v3 = true;
    unsigned char state = kFabricStateCompleted;
    int status = kSuccess;
    unsigned clique = 32766;
    unsigned mask = 0xaa;
    unsigned char summary = 1;
    bool uuid = true;
    std::vector<unsigned> asked;
};
Answer answer;

template <class Info>
void fill(Info& info) {
    if (answer.uuid) {
        for (unsigned i = 0; i < kFabricUuidLength; ++i) info.clusterUuid[i] = static_cast<unsigned char>(0xd0 + i);
    }
    info.status = answer.status;
    info.cliqueId = answer.clique;
    info.state = answer.state;
}

Return fabric_v(Device, void* raw) {
    const unsigned version = *static_cast<unsigned*>(raw);
    answer.asked.push_back(version);
    if (answer.v_result != kSuccess) return answer.v_result;
    if (version == kGpuFabricInfoV3Version && answer.accept_v3) {
        auto* info = static_cast<GpuFabricInfoV3*>(raw);
        fill(*info);
        info->healthMask = answer.mask;
        info->healthSummary = answer.summary;
        return kSuccess;
    }
    if (version == kGpuFabricInfoV2Version) {
        auto* info = static_cast<GpuFabricInfoV2*>(raw);
        fill(*info);
        info->healthMask = answer.mask;
        return kSuccess;
    }
    return kErrorArgumentVersionMismatch;
}

Return fabric_v1(Device, void* raw) {
    answer.asked.push_back(1);
    fill(*static_cast<GpuFabricInfoV1*>(raw));
    return kSuccess;
}

const char* words(Return r) {
    return r == kSuccess ? "Success" : r == kErrorInsufficientResources ? "Insufficient Resources" : "Not Supported";
}

Return no_devices(unsigned* count) {
    *count = 0;
    return kSuccess;
}

Library library(bool with_v, bool with_v1) {
    Api api{};
    api.error_string = words;
    api.device_get_count = no_devices;
    if (with_v) api.device_get_fabric_info_v = fabric_v;
    if (with_v1) api.device_get_fabric_info = fabric_v1;
    return Library::from_table(api);
}

}  // namespace fabric_info_test

using namespace fabric_info_test;

TEST_CASE("fabric info: v3 where the library takes it, v2 on a version mismatch, v1 without the V entry point") {
    answer = Answer{};
    const Library both = library(true, true);
    FabricInfo f = query_fabric_info(both, nullptr);
    CHECK(f.api == "v3");
    CHECK(answer.asked == std::vector<unsigned>{0x03000028U});
    CHECK(f.health_summary == 1U);
    CHECK(fabric_attached(f));
    CHECK(cluster_uuid_text(f) == "d0d1d2d3-d4d5-d6d7-d8d9-dadbdcdddedf");
    CHECK(fabric_domain(f) == "d0d1d2d3-d4d5-d6d7-d8d9-dadbdcdddedf.32766");

    answer = Answer{};
    answer.accept_v3 = false;
    f = query_fabric_info(both, nullptr);
    CHECK(f.api == "v2");
    CHECK(answer.asked == std::vector<unsigned>{0x03000028U, 0x02000024U});
    CHECK(f.health_mask == 0xaaU);
    CHECK_FALSE(f.health_summary.has_value());

    answer = Answer{};
    answer.v_result = kErrorFunctionNotFound;
    f = query_fabric_info(both, nullptr);
    CHECK(f.api == "v1");
    CHECK_FALSE(f.health_mask.has_value());
    CHECK(fabric_attached(f));

    answer = Answer{};
    const Library v1_only = library(false, true);
    f = query_fabric_info(v1_only, nullptr);
    CHECK(f.api == "v1");
    CHECK(answer.asked == std::vector<unsigned>{1});

    const Library none = library(false, false);
    f = query_fabric_info(none, nullptr);
    CHECK_FALSE(fabric_answered(f));
    CHECK(f.error.find("this NVML has no fabric info") == 0);
    CHECK(judge_fabric(f, false).status == CheckStatus::skip);
    CHECK(judge_fabric(f, false).reason == f.error);
    CHECK(judge_fabric(f, true).status == CheckStatus::warn);
    CHECK(judge_fabric(f, true).reason.find("NVML cannot say whether the GPU joined its NVLink fabric: ") == 0);
}

TEST_CASE("the health mask decodes with NVML's widths: 0xaa is healthy, not degraded") {
    const auto& fields = fabric_health_fields();
    REQUIRE(fields.size() == 6);
    CHECK(fields[0].width == 0x3);  // not the 0x11 of the 12.4-12.6 headers
    for (std::size_t i = 0; i < 4; ++i) CHECK(health_field_value(0xaa, fields[i]) == 2);
    CHECK(health_field_word(fields[0], 2) == "full");
    CHECK(health_field_word(fields[2], 1) == "unhealthy");
    CHECK(health_field_value(0x11aa, fields[4]) == 1);
    CHECK(health_field_word(fields[4], 1) == "none");
    CHECK(health_field_word(fields[4], 4) == "no-partition");
    CHECK(health_field_word(fields[5], health_field_value(0x11aa, fields[5])) == "assigned");
    CHECK(health_field_word(fields[1], 0) == "not-supported");
    CHECK(health_summary_name(3) == "limited-capacity");
}

TEST_CASE("attached exactly when completed, success and a non-zero cluster UUID; verdicts") {
    const Library lib = library(true, true);
    auto verdict = [&](bool configured) { return judge_fabric(query_fabric_info(lib, nullptr), configured); };
    answer = Answer{};
    CHECK(verdict(true).status == CheckStatus::pass);

    answer = Answer{};  // the standalone H200: success, state NOT_SUPPORTED, zeros
    answer.state = kFabricStateNotSupported, answer.uuid = false, answer.clique = 0, answer.mask = 0,
    answer.summary = 0;
    CHECK(verdict(true).status == CheckStatus::skip);
    CHECK(verdict(true).reason == "not attached to a multi-node NVLink fabric (NVML: fabric not supported)");

    answer = Answer{};
    answer.v_result = kErrorNotSupported;
    const FabricInfo ns = query_fabric_info(lib, nullptr);
    CHECK(fabric_answered(ns));
    CHECK_FALSE(fabric_attached(ns));
    CHECK(judge_fabric(ns, true).status == CheckStatus::skip);

    answer = Answer{};  // HGX: completed with a zero UUID
    answer.uuid = false;
    CHECK(verdict(true).status == CheckStatus::skip);
    CHECK(verdict(true).reason.find("zero cluster UUID") != std::string::npos);

    answer = Answer{};
    answer.status = kErrorInsufficientResources, answer.uuid = false, answer.clique = 0;
    CHECK(verdict(false).status == CheckStatus::skip);
    CHECK(verdict(true).status == CheckStatus::fail);
    CHECK(verdict(true).reason.find("Insufficient Resources") != std::string::npos);

    answer = Answer{};
    answer.state = kFabricStateInProgress;
    CHECK(verdict(false).status == CheckStatus::skip);
    CHECK(verdict(true).status == CheckStatus::warn);

    answer = Answer{};
    answer.summary = 2;
    CHECK(verdict(false).status == CheckStatus::fail);
    answer = Answer{};
    answer.mask = 0x9a;  // route unhealthy
    CHECK(verdict(false).reason.find("route is unhealthy") != std::string::npos);
    answer = Answer{};
    answer.mask = 0x04aa;  // incorrect configuration: no partition
    CHECK(verdict(false).status == CheckStatus::fail);
    CHECK(verdict(false).reason.find("no-partition") != std::string::npos);
    answer = Answer{};
    answer.summary = 3;
    CHECK(verdict(false).status == CheckStatus::warn);
    answer = Answer{};
    answer.mask = 0xa9;  // degraded bandwidth
    CHECK(verdict(false).status == CheckStatus::warn);
    CHECK(verdict(false).reason.find("bandwidth is degraded") != std::string::npos);
}

TEST_CASE("the GPUs of a node disagree when some are attached and some not, or in different domains") {
    const Library lib = library(true, true);
    answer = Answer{};
    const FabricInfo a = query_fabric_info(lib, nullptr);
    answer.clique = 7;
    const FabricInfo b = query_fabric_info(lib, nullptr);
    answer.uuid = false;
    const FabricInfo zero = query_fabric_info(lib, nullptr);
    CHECK(fabric_disagreement({{"GPU-0", a}, {"GPU-1", a}}).empty());
    CHECK(fabric_disagreement({{"GPU-0", a}, {"GPU-1", b}}).find("different NVLink domains") != std::string::npos);
    const std::string mixed = fabric_disagreement({{"GPU-0", a}, {"GPU-1", zero}});
    CHECK(mixed.find("some are attached") != std::string::npos);
    CHECK(mixed.find("GPU-1 not attached") != std::string::npos);
    CHECK(fabric_disagreement({{"GPU-0", zero}, {"GPU-1", zero}}).empty());
}

TEST_CASE("the JSON carries each figure, and nulls what NVML did not give") {
    const Library lib = library(true, true);
    answer = Answer{};
    answer.mask = 0x11aa;
    const auto j = to_json(query_fabric_info(lib, nullptr));
    CHECK(j["attached"] == true);
    CHECK(j["state"] == "completed");
    CHECK(j["status"] == "Success");
    CHECK(j["clique_id"] == 32766);
    CHECK(j["health_summary"] == "healthy");
    CHECK(j["health"]["partition_assigned"] == "assigned");
    CHECK(j["health"]["incorrect_configuration"] == "none");
    answer.v_result = kErrorNotSupported;
    const auto ns = to_json(query_fabric_info(lib, nullptr));
    CHECK(ns["state"] == "not-supported");
    CHECK(ns["cluster_uuid"].is_null());
    CHECK(ns["result"] == kErrorNotSupported);
}
