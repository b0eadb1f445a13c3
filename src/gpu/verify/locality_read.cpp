#include "gpu/verify/locality_read.hpp"

#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "base/scope_exit.hpp"
#include "cuda/driver_call.hpp"
#include "cuda/locality_compat.hpp"
#include "cuda/owned_handle.hpp"
#include "gpu/verify/verify_module.hpp"

namespace cumemctl::gpu {
namespace {

// Why the split cannot be used, or nullopt when every entry point is there.
std::optional<std::string> missing_split(const DriverApi& api) {
    if (api.cuDevSmResourceSplit == nullptr) return "the driver does not offer cuDevSmResourceSplit (CUDA 13.1)";
    if (api.cuDeviceGetDevResource == nullptr || api.cuDevResourceGenerateDesc == nullptr ||
        api.cuGreenCtxCreate == nullptr || api.cuGreenCtxDestroy == nullptr || api.cuCtxFromGreenCtx == nullptr ||
        api.cuCtxGetCurrent == nullptr || api.cuCtxSetCurrent == nullptr) {
        return "the driver does not offer green contexts (cuGreenCtxCreate)";
    }
    return std::nullopt;
}

// One domain's SMs as a resource: the split with the locality-domain flag and smCount 0 (all the SMs
// the domain guarantees); nullopt, with the driver's answer in `why`, where it refuses.
std::optional<CUdevResource> domain_sms(const DriverApi& api, const CUdevResource& all, int domain, std::string& why) {
    CU_DEV_SM_RESOURCE_GROUP_PARAMS params;
    std::memset(&params, 0, sizeof params);
    params.flags = locality::kGroupFlagDomain;
    std::memcpy(reinterpret_cast<unsigned char*>(&params) + 16, &domain, sizeof domain);  // localityDomainId
    CUdevResource group{};
    CUdevResource rest{};
    const CUresult r = api.cuDevSmResourceSplit(&group, 1, &all, &rest, 0, &params);
    if (r != CUDA_SUCCESS) {
        why = fmt::format("cuDevSmResourceSplit for domain {}: {}", domain, describe_failure(api, r, "").name);
        return std::nullopt;
    }
    return group;
}

// The pattern checked from a green context of `sms`.
VerifyResult check_from_green(const DriverApi& api, int device, CUdevResource sms, CUdeviceptr ptr, std::size_t size,
                              std::uint64_t seed) {
    CUdevResourceDesc desc = nullptr;
    CU_CALL(api, cuDevResourceGenerateDesc, &desc, &sms, 1);
    OwnedHandle<CUgreenCtx> green([&api](CUgreenCtx g) { return api.cuGreenCtxDestroy(g); });
    CU_CALL(api, cuGreenCtxCreate, green.out(), desc, device, CU_GREEN_CTX_DEFAULT_STREAM);
    CUcontext previous = nullptr;
    api.cuCtxGetCurrent(&previous);
    CUcontext ctx = nullptr;
    CU_CALL(api, cuCtxFromGreenCtx, &ctx, green.get());
    CU_CALL(api, cuCtxSetCurrent, ctx);
    // Before the green context goes (`green`, made first, goes last): the kernels loaded in it, and the
    // context current before is current again.
    const ScopeExit restore([&api, previous] {
        try {
            unload_verify_kernels(api);
        } catch (const Error&) {
            // Nothing to report at teardown: the check's result is what counts.
        }
        api.cuCtxSetCurrent(previous);
    });
    return check_pattern(api, ptr, size, seed);
}

}  // namespace

LocalityReads read_from_each_domain(const DriverApi& api, int device, CUdeviceptr ptr, std::size_t size,
                                    std::uint64_t seed, int memory_domain, int domains) {
    LocalityReads out;
    out.memory_domain = memory_domain;
    std::optional<std::string> why = missing_split(api);
    std::vector<std::pair<int, CUdevResource>> groups;
    if (!why) {
        CUdevResource all{};
        if (const CUresult r = api.cuDeviceGetDevResource(device, &all, CU_DEV_RESOURCE_TYPE_SM); r != CUDA_SUCCESS) {
            why = "cuDeviceGetDevResource: " + describe_failure(api, r, "").name;
        }
        for (int d = 0; !why && d < domains; ++d) {
            std::string refused;
            if (auto g = domain_sms(api, all, d, refused)) {
                groups.emplace_back(d, *g);
            } else {
                why = refused;
            }
        }
    }
    if (why) {
        out.fallback = *why;
        out.reads.push_back({-1, 0, false, check_pattern(api, ptr, size, seed)});
        return out;
    }
    for (const auto& [d, g] : groups) {
        out.reads.push_back({d, g.sm.smCount, d == memory_domain, check_from_green(api, device, g, ptr, size, seed)});
    }
    return out;
}

namespace {

// The local read's and the best remote read's GB/s, where both were made.
std::optional<std::pair<double, double>> local_remote(const LocalityReads& r) {
    std::optional<double> local, remote;
    for (const auto& read : r.reads) {
        if (read.domain < 0) continue;
        if (read.local) {
            local = read.check.check_gbps;
        } else if (!remote || read.check.check_gbps > *remote) {
            remote = read.check.check_gbps;
        }
    }
    if (!local || !remote) return std::nullopt;
    return std::pair{*local, *remote};
}

}  // namespace

nlohmann::json locality_reads_json(const LocalityReads& r) {
    nlohmann::json reads = nlohmann::json::array();
    for (const auto& read : r.reads) {
        reads.push_back({{"domain", read.domain < 0 ? nlohmann::json(nullptr) : nlohmann::json(read.domain)},
                         {"sms", read.sms},
                         {"local", read.local},
                         {"check_gbps", read.check.check_gbps},
                         {"mismatches", read.check.mismatches}});
    }
    nlohmann::json j{{"memory_domain", r.memory_domain},
                     {"reads", std::move(reads)},
                     {"whole_device", !r.fallback.empty()},
                     {"fallback_reason", r.fallback.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.fallback)}};
    const auto lr = local_remote(r);
    j["remote_to_local"] = lr && lr->first > 0 ? nlohmann::json(lr->second / lr->first) : nlohmann::json(nullptr);
    return j;
}

std::string locality_reads_text(const LocalityReads& r) {
    if (!r.fallback.empty()) {
        return fmt::format("{:.1f} GB/s from the whole device ({})", r.reads.front().check.check_gbps, r.fallback);
    }
    std::string text;
    for (const auto& read : r.reads) {
        if (!text.empty()) text += "; ";
        text += fmt::format("{} domain {} ({} SMs) {:.1f} GB/s", read.local ? "local" : "remote", read.domain, read.sms,
                            read.check.check_gbps);
    }
    if (const auto lr = local_remote(r); lr && lr->first > 0) {
        text += fmt::format(" (remote {:.2f} of local)", lr->second / lr->first);
    }
    return text;
}

}  // namespace cumemctl::gpu
