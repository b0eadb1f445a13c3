#include "gpu/verify/verify_json.hpp"

namespace cumemctl::gpu {

nlohmann::json to_json(const VerifyResult& r) {
    return {{"bytes", r.bytes},
            {"mismatches", r.mismatches},
            {"first_mismatch_offset", r.ok() ? nlohmann::json(nullptr) : nlohmann::json(r.first_mismatch_offset)},
            {"fill_seconds", r.fill_seconds},
            {"check_seconds", r.check_seconds},
            {"fill_gbps", r.fill_gbps},
            {"check_gbps", r.check_gbps},
            {"ok", r.ok()}};
}

VerifyResult verify_result_from_json(const nlohmann::json& j) {
    VerifyResult r;
    r.bytes = j.at("bytes").get<std::uint64_t>();
    r.mismatches = j.at("mismatches").get<std::uint64_t>();
    if (!j.at("first_mismatch_offset").is_null())
        r.first_mismatch_offset = j["first_mismatch_offset"].get<std::uint64_t>();
    r.fill_seconds = j.at("fill_seconds").get<double>();
    r.check_seconds = j.at("check_seconds").get<double>();
    r.fill_gbps = j.at("fill_gbps").get<double>();
    r.check_gbps = j.at("check_gbps").get<double>();
    return r;
}

}  // namespace cumemctl::gpu
