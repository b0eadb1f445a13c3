#include "create_report.hpp"

#include <fmt/format.h>

#include "gpu/device/devices.hpp"
#include "gpu/device/locality.hpp"
#include "gpu/device/memory_props.hpp"
#include "gpu/verify/verify_json.hpp"
#include "gpu_identity.hpp"
#include "steps/step_json.hpp"
#include "util/size.hpp"

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

std::string prop_text(const CUmemAllocationProp& p) {
    const auto flags = flag_names(p);
    return fmt::format("{}, handle types {}, flags {}", location_name(p.location),
                       handle_type_name(p.requestedHandleTypes),
                       flags.empty() ? std::string("none") : fmt::format("{}", fmt::join(flags, "+")));
}

std::string verify_text(const VerifyResult& v) {
    return fmt::format("{} mismatching words; fill {:.1f} GB/s, check {:.1f} GB/s", v.mismatches, v.fill_gbps,
                       v.check_gbps);
}

// "fd 7: nv_dmabuf, 2 MiB by fdinfo, links to /dmabuf:; closed", or why it is not NVIDIA's dma-buf.
std::string dma_buf_text(const DmaBufExport& e) {
    if (e.mismatch) return *e.mismatch + "; closed";
    return fmt::format("fd {}: {}, {} by fdinfo and lseek{}; closed", e.info.fd, e.info.exporter, format_size(e.size),
                       e.info.link.empty() ? "" : ", links to " + e.info.link);
}

Table summary_table(const CreateRequest& q, const CreateResult& r) {
    Table t{"Allocation", {"", "value"}, {}, {}};
    t.wrap_last = true;
    auto row = [&](std::string k, std::string v) { t.rows.push_back({std::move(k), std::move(v)}); };
    row("device", std::to_string(q.device));
    row("size",
        r.size == 0
            ? fmt::format("{} bytes asked for", r.requested_size)
            : fmt::format("{} ({} bytes{})", format_size(r.size), r.size,
                          r.size != r.requested_size ? fmt::format(", rounded up from {}", r.requested_size) : ""));
    if (r.granularity) {
        row("granularity", fmt::format("minimum {}, recommended {}", format_size(r.granularity->minimum),
                                       format_size(r.granularity->recommended)));
    }
    if (r.requested) row("requested", prop_text(*r.requested));
    if (r.granted) row("granted", prop_text(*r.granted));
    if (r.address) row("mapped at", fmt::format("{:#x}", *r.address));
    if (r.placement) row("placement", placement_text(*r.placement));
    if (r.domain_reads) row("reads by domain", locality_reads_text(*r.domain_reads));
    if (r.verify) row("verify", verify_text(*r.verify));
    add_access_rows(t, r.access, r.peer_checks);
    if (r.fill) row("fill", fmt::format("fill {:.1f} GB/s", r.fill->fill_gbps));
    if (r.exported) {
        row("export", r.exported->type == CU_MEM_HANDLE_TYPE_FABRIC ? "fabric " + r.exported->fabric_hex
                                                                    : fmt::format("posix-fd {}", r.exported->fd));
    }
    if (r.dma_buf) row("dma-buf", dma_buf_text(*r.dma_buf));
    if (r.import_check) {
        const auto& ic = *r.import_check;
        row("import check", fmt::format("{} (pid {}, exit status {}){}", ic.ok() ? "pass" : "fail", ic.pid,
                                        ic.exit_status, ic.check ? ": " + verify_text(*ic.check) : ""));
    }
    if (r.before && r.after) {
        // In the table's units, with the change beside them: two sizes of a GiB's hundredths look alike.
        const std::uint64_t b = r.before->free_bytes, a = r.after->free_bytes;
        const std::string change =
            a == b ? "unchanged" : fmt::format("{}{}", a < b ? "-" : "+", format_size(a < b ? b - a : a - b));
        row("free memory",
            fmt::format("{} before, {} after, {} ({})", format_size(b), format_size(a), change, kDeviceFreeScope));
        row("open descriptors", fmt::format("{} before, {} after", r.before->fds.size(), r.after->fds.size()));
    }
    return t;
}

void add_warnings(Report& report, const CreateRequest& q, const CreateResult& r) {
    if (r.requested && r.granted && r.requested->allocFlags.compressionType == CU_MEM_ALLOCATION_COMP_GENERIC &&
        r.granted->allocFlags.compressionType != CU_MEM_ALLOCATION_COMP_GENERIC) {
        report.add_warning("generic compression was asked for and not granted: the allocation is not compressible",
                           "the driver decides; see CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED", q.device);
    }
    if (r.before && r.after) warn_unbalanced(report, *r.before, *r.after, r.steps, q.device);
}

}  // namespace

nlohmann::json access_json(const std::vector<DeviceAccess>& access) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& a : access) {
        j.push_back({{"device", a.device}, {"access", access_flags_name(a.flags)}, {"peer", a.peer}});
    }
    return j;
}

nlohmann::json device_checks_json(const std::vector<DeviceCheck>& checks) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& c : checks) {
        nlohmann::json one = to_json(c.check);
        one["device"] = c.device;
        j.push_back(std::move(one));
    }
    return j;
}

void add_access_rows(Table& table, const std::vector<DeviceAccess>& access, const std::vector<DeviceCheck>& checks) {
    if (!access.empty()) {
        std::vector<std::string> parts;
        for (const auto& a : access) {
            parts.push_back(fmt::format("GPU {} {}{}", a.device, access_flags_name(a.flags), a.peer ? " (peer)" : ""));
        }
        table.rows.push_back({"access", fmt::format("{}", fmt::join(parts, ", "))});
    }
    for (const auto& c : checks) {
        table.rows.push_back({fmt::format("check from GPU {}", c.device),
                              fmt::format("{} mismatching words in {}; check {:.1f} GB/s", c.check.mismatches,
                                          format_size(c.check.bytes), c.check.check_gbps)});
    }
}

nlohmann::json resources_json(const ResourceSnapshot& before, const std::optional<ResourceSnapshot>& after,
                              const std::vector<steps::Step>& steps) {
    nlohmann::json j{{"device_free_before_bytes", before.free_bytes},
                     {"device_free_after_bytes", nullptr},
                     {"device_free_scope", kDeviceFreeScope},
                     {"open_fds_before", before.fds.size()},
                     {"open_fds_after", nullptr},
                     {"failed_releases", failed_releases(steps)},
                     {"handles_not_released", nullptr}};
    if (after) {
        const ResourceDelta d = compare(before, *after);
        j["device_free_after_bytes"] = after->free_bytes;
        j["open_fds_after"] = after->fds.size();
        j["device_free_delta_bytes"] = d.free_bytes;
        j["open_fds_delta"] = d.fds;
        j["new_fds"] = d.new_fds;
        j["handles_not_released"] = d.lost_handles;
        j["balanced"] = d.balanced();
    }
    return j;
}

void warn_unbalanced(Report& report, const ResourceSnapshot& before, const ResourceSnapshot& after,
                     const std::vector<steps::Step>& steps, int device) {
    const ResourceDelta d = compare(before, after);
    if (d.balanced()) return;
    std::vector<std::string> parts;
    if (d.fds != 0 || !d.new_fds.empty()) {
        parts.push_back(fmt::format("descriptors {:+}{}", d.fds,
                                    d.new_fds.empty() ? "" : fmt::format(" (new: {})", fmt::join(d.new_fds, ", "))));
    }
    if (d.lost_handles != 0) {
        const std::vector<std::string> refused = failed_releases(steps);
        parts.push_back(fmt::format("{} handle{} not released{}", d.lost_handles, d.lost_handles == 1 ? "" : "s",
                                    refused.empty() ? "" : fmt::format(" ({})", fmt::join(refused, ", "))));
    }
    report.add_warning(fmt::format("resources differ after create: {}", fmt::join(parts, "; ")),
                       "this process did not give back what it made (a descriptor still open, or a release the "
                       "driver refused): a leak until the process ends; report it with the driver version",
                       device);
}

void fill_create_report(Report& report, const CreateRequest& request, const CreateResult& result,
                        const DeviceIdentity& id) {
    report.json_results = results_json(request, result);
    nlohmann::json named{{"device", request.device}};
    add_identity(named, id);
    named.update(report.json_results);  // the device and its names first
    report.json_results = std::move(named);
    report.tables.push_back(summary_table(request, result));
    report.tables.back().notes.push_back(identity_note(id));
    report.tables.push_back(steps_table("Steps", result.steps));
    if (result.import_check) {
        report.tables.push_back(steps_table(fmt::format("Import check steps (pid {})", result.import_check->pid),
                                            result.import_check->steps));
    }
    add_warnings(report, request, result);
}

}  // namespace cumemctl::cmd
