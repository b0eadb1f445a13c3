#include "create_results.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "create_report.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/device/locality.hpp"
#include "gpu/device/memory_props.hpp"
#include "gpu/verify/verify_json.hpp"
#include "gpu_identity.hpp"
#include "steps/step_json.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

template <class T, class F>
nlohmann::json or_null(const std::optional<T>& value, F&& to) {
    return value ? nlohmann::json(to(*value)) : nlohmann::json(nullptr);
}

nlohmann::json prop_json(const CUmemAllocationProp& p) {
    // The id decoded by the location's type: a localized id packs the device and the domain.
    nlohmann::json j = decoded_location_json(p.location);
    j.update({{"handle_types", handle_type_names(static_cast<int>(p.requestedHandleTypes))},
              {"compression", p.allocFlags.compressionType == CU_MEM_ALLOCATION_COMP_GENERIC},
              {"rdma", p.allocFlags.gpuDirectRDMACapable != 0},
              {"tile_pool", (p.allocFlags.usage & CU_MEM_CREATE_USAGE_TILE_POOL) != 0}});
    return j;
}

nlohmann::json export_json(const ExportInfo& e) {
    nlohmann::json j{{"handle_type", handle_type_name(e.type)}};
    if (e.type == CU_MEM_HANDLE_TYPE_FABRIC) {
        j["fabric_handle"] = e.fabric_hex;
    } else {
        j["fd"] = e.fd;
    }
    return j;
}

nlohmann::json import_json(const ImportCheckResult& r) {
    return {{"ok", r.ok()},
            {"pid", r.pid},
            {"exit_status", r.exit_status},
            {"steps", steps_json(r.steps)},
            {"check", or_null(r.check, [](const VerifyResult& v) { return to_json(v); })},
            {"problem", or_null(r.problem, [](const Problem& p) { return to_json(p); })}};
}

nlohmann::json results_json(const CreateRequest& q, const CreateResult& r) {
    nlohmann::json j{
        {"device", q.device},
        {"requested_bytes", r.requested_size},
        {"size_bytes", r.size == 0 ? nlohmann::json(nullptr) : nlohmann::json(r.size)},
        {"rounded_up", r.size != 0 && r.size != r.requested_size},
        {"granularity",
         or_null(r.granularity,
                 [](const Granularity& g) {
                     return nlohmann::json{{"minimum_bytes", g.minimum}, {"recommended_bytes", g.recommended}};
                 })},
        {"requested", or_null(r.requested, prop_json)},
        {"granted", or_null(r.granted, prop_json)},
        {"address", or_null(r.address, [](CUdeviceptr a) { return fmt::format("{:#x}", a); })},
        {"verify", or_null(r.verify, [](const VerifyResult& v) { return to_json(v); })},
        {"access", access_json(r.access)},
        {"peer_checks", device_checks_json(r.peer_checks)},
        {"fill", or_null(r.fill, [](const VerifyResult& v) { return to_json(v); })},
        {"export", or_null(r.exported, export_json)},
        {"import_check", or_null(r.import_check, import_json)},
        {"steps", steps_json(r.steps)},
        {"resources", r.before ? resources_json(*r.before, r.after, r.steps) : nlohmann::json(nullptr)}};
    if (r.address) j["seed"] = r.seed;
    if (q.dma_buf) j["dma_buf"] = or_null(r.dma_buf, [](const DmaBufExport& e) { return to_json(e); });
    if (q.memory.location.domain) {
        j["placement"] = or_null(r.placement, placement_json);
        j["domain_reads"] = or_null(r.domain_reads, locality_reads_json);
        j["locality_domains"] = r.domains;
    }
    return j;
}

}  // namespace

nlohmann::json CreateResults::to_json() const {
    nlohmann::json j{{"device", request.device}};
    add_identity(j, id);
    j.update(results_json(request, result));  // the device and its names first
    return j;
}

}  // namespace cumemctl::cmd
