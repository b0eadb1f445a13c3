#include "create_report.hpp"

#include <fmt/format.h>

#include "create_results.hpp"
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
    report.set_results(CreateResults(request, result, id));
    add_warnings(report, request, result);
}

std::vector<Table> CreateResults::tables(const Report& /*report*/) const {
    std::vector<Table> tables{summary_table(request, result)};
    tables.back().notes.push_back(identity_note(id));
    tables.push_back(steps_table("Steps", result.steps));
    if (result.import_check) {
        tables.push_back(steps_table(fmt::format("Import check steps (pid {})", result.import_check->pid),
                                     result.import_check->steps));
    }
    return tables;
}

}  // namespace cumemctl::cmd
