// doctor's report as a node-feature-discovery feature file (man cumemctl-doctor, "NODE FEATURE DISCOVERY").
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "doctor/check.hpp"
#include "doctor/renderers.hpp"
#include "report/json_fields.hpp"
#include "util/host.hpp"

namespace cumemctl::doctor {
namespace {

using nlohmann::json;

// A check's status as the report wrote it, parsed once; none where it is not one of doctor's.
std::optional<CheckStatus> status_of(const json& check) {
    return parse_status(json_text(check, "status"));
}

// Whether a check judged something: pass, warn or fail (a skip, a timeout or a busy GPU judged nothing).
bool judged(const json& check) {
    const auto s = status_of(check);
    return s == CheckStatus::pass || s == CheckStatus::warn || s == CheckStatus::fail;
}

// Kubernetes' label values: at most 63 characters, empty or alphanumerics at both ends with '-', '_'
// and '.' between (IsValidLabelValue, which NFD applies to every label).
bool valid_value(const std::string& v) {
    if (v.size() > 63) return false;
    if (v.empty()) return true;
    const auto alnum = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    };
    if (!alnum(v.front()) || !alnum(v.back())) return false;
    return std::all_of(v.begin(), v.end(), [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// The checks of one name, in report order.
std::vector<const json*> checks_named(const json& results, std::string_view name) {
    std::vector<const json*> out;
    const json& checks = json_field(results, "checks");
    if (!checks.is_array()) return out;
    for (const auto& c : checks) {
        if (json_text(c, "check") == name) out.push_back(&c);
    }
    return out;
}

// The worst status of the checks (status_severity), none where no check has one.
std::optional<CheckStatus> worst_status(const std::vector<const json*>& checks) {
    std::optional<CheckStatus> worst;
    for (const json* c : checks) {
        const auto s = status_of(*c);
        if (s && (!worst || status_severity(*s) > status_severity(*worst))) worst = s;
    }
    return worst;
}

class Labels {
public:
    void add(std::string name, std::string value) {
        if (valid_value(value)) lines_.push_back(fmt::format("{}{}={}", kNfdLabelPrefix, name, value));
    }
    void add(std::string name, bool value) { add(std::move(name), std::string(value ? "true" : "false")); }
    const std::vector<std::string>& lines() const { return lines_; }

private:
    std::vector<std::string> lines_;
};

// What every GPU's capabilities check says: VMM, pools and their handle types, fabric handles, compute
// capability (the lowest, where GPUs differ). Only where every GPU's check passed or warned.
void add_capabilities(Labels& labels, const json& results) {
    const auto caps = checks_named(results, kCheckCapabilities);
    if (caps.empty()) return;
    bool vmm = true, pools = true, fabric = true;
    std::vector<std::string> handle_types;
    std::string lowest_cc;
    double lowest = 1e9;
    bool first = true;
    for (const json* c : caps) {
        const auto s = status_of(*c);
        if (s != CheckStatus::pass && s != CheckStatus::warn) return;
        const json& d = json_field(*c, "details");
        const json& cap = json_field(d, "capabilities");
        vmm = vmm && json_flag(cap, "vmm");
        pools = pools && json_flag(cap, "memory_pools");
        fabric = fabric && json_flag(cap, "fabric");
        std::vector<std::string> types;
        if (const json& ts = json_field(cap, "pool_handle_types"); ts.is_array()) {
            for (const auto& t : ts) {
                if (t.is_string()) types.push_back(t.get<std::string>());
            }
        }
        if (first) {
            handle_types = types;
        } else {
            std::erase_if(handle_types, [&](const std::string& t) {
                return std::find(types.begin(), types.end(), t) == types.end();
            });
        }
        first = false;
        const std::string cc = json_text(d, "compute_capability");
        try {
            if (!cc.empty() && std::stod(cc) < lowest) lowest = std::stod(cc), lowest_cc = cc;
        } catch (const std::exception&) {
        }
    }
    labels.add("vmm", vmm);
    labels.add("memory-pools", pools);
    for (const auto& t : handle_types) labels.add("pool-handle." + t, true);
    labels.add("fabric-handles", fabric);
    if (!lowest_cc.empty()) labels.add("compute-capability", lowest_cc);
}

// The clique and cluster of the multi-node NVLink fabric, where every GPU is attached to the same one.
void add_fabric(Labels& labels, const json& results) {
    const auto fabric = checks_named(results, kCheckFabric);
    if (fabric.empty()) return;
    std::string clique, cluster;
    for (const json* c : fabric) {
        const json& d = json_field(*c, "details");
        if (!json_flag(d, "attached") || !json_field(d, "clique_id").is_number_integer()) return;
        const std::string this_clique = std::to_string(json_field(d, "clique_id").get<long long>());
        const std::string this_cluster = json_text(d, "cluster_uuid");
        if (!clique.empty() && (this_clique != clique || this_cluster != cluster)) return;
        clique = this_clique, cluster = this_cluster;
    }
    labels.add("fabric.clique", clique);
    if (!cluster.empty()) labels.add("fabric.cluster-uuid", cluster);
}

}  // namespace

void NfdRenderer::render(const Report& report, std::ostream& out) const {
    const json& r = report.json_results;
    out << fmt::format("# cumemctl doctor on {} at {} ({} level): node-feature-discovery feature labels\n", report.host,
                       utc_timestamp(report.started), json_text(r, "level", "full"));
    if (report.expires) out << "# +expiry-time=" << utc_timestamp(*report.expires) << '\n';
    // Errors as comments (which NFD reads past): a node without a driver still gets doctor=fail.
    for (const auto& e : report.errors) {
        std::string message = e.message;
        std::replace(message.begin(), message.end(), '\n', ' ');
        out << "# error: " << message << '\n';
    }
    Labels labels;
    if (const auto status = parse_status(json_text(r, "status")))
        labels.add("doctor", std::string(status_name(*status)));
    if (const json& n = json_field(r, "device_count"); n.is_number_integer()) {
        labels.add("gpu-count", std::to_string(n.get<long long>()));
    }
    add_capabilities(labels, r);
    // Only a judgement of every GPU: a skipped or timed-out check (no NVML, a hung call) judged nothing.
    const auto health = checks_named(r, kCheckMemoryHealth);
    const bool every_judged =
        !health.empty() && std::all_of(health.begin(), health.end(), [](const json* c) { return judged(*c); });
    if (every_judged) labels.add("memory-health", std::string(status_name(*worst_status(health))));
    const auto imex = checks_named(r, kCheckImexChannels);
    if (!imex.empty() && judged(*imex.front()))
        labels.add("imex-channel", status_of(*imex.front()) == CheckStatus::pass);
    add_fabric(labels, r);
    for (const auto& line : labels.lines()) out << line << '\n';
}

}  // namespace cumemctl::doctor
