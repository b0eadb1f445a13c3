// doctor's report as a node-feature-discovery feature file (man cumemctl-doctor, "NODE FEATURE DISCOVERY").
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "doctor/check.hpp"
#include "doctor/context.hpp"
#include "doctor/doctor_results.hpp"
#include "doctor/renderers.hpp"
#include "util/host.hpp"
#include "util/printable.hpp"

namespace cumemctl::doctor {
namespace {

// Whether a check judged something: pass, warn or fail (a skip, a timeout or a busy GPU judged nothing).
bool judged(const CheckResult& check) {
    const CheckStatus s = check.outcome.status;
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
std::vector<const CheckResult*> checks_named(const DoctorRun& run, std::string_view name) {
    std::vector<const CheckResult*> out;
    for (const CheckResult& c : run.results) {
        if (c.check == name) out.push_back(&c);
    }
    return out;
}

// The worst status of the checks (status_severity); the checks are never none.
CheckStatus worst_status(const std::vector<const CheckResult*>& checks) {
    CheckStatus worst = checks.front()->outcome.status;
    for (const CheckResult* c : checks) worst = cumemctl::worse(worst, c->outcome.status);
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

// Whether `info` has capability `key` (a pool handle type mask, a boolean).
bool has(const gpu::DeviceInfo& info, std::string_view key) {
    return capability_of(info, key).value_or(0) != 0;
}

// What every GPU's capabilities check says: VMM, pools and their handle types, fabric handles, compute
// capability (the lowest, where GPUs differ). Only where every GPU's check passed or warned.
void add_capabilities(Labels& labels, const DoctorRun& run) {
    const auto caps = checks_named(run, kCheckCapabilities);
    if (caps.empty()) return;
    bool vmm = true, pools = true, fabric = true;
    std::vector<std::string> handle_types;
    std::optional<std::pair<int, int>> lowest;
    bool first = true;
    for (const CheckResult* c : caps) {
        const CheckStatus s = c->outcome.status;
        const auto* evidence = c->outcome.evidence_as<CapabilitiesEvidence>();
        if ((s != CheckStatus::pass && s != CheckStatus::warn) || evidence == nullptr) return;
        const gpu::DeviceInfo& info = evidence->device;
        vmm = vmm && has(info, "vmm");
        pools = pools && has(info, "memory_pools");
        fabric = fabric && has(info, "fabric");
        const auto mask = capability_of(info, "pool_handle_types");
        const std::vector<std::string> types = mask ? gpu::handle_type_names(*mask) : std::vector<std::string>{};
        if (first) {
            handle_types = types;
        } else {
            std::erase_if(handle_types, [&](const std::string& t) {
                return std::find(types.begin(), types.end(), t) == types.end();
            });
        }
        first = false;
        const std::pair<int, int> cc{info.cc_major, info.cc_minor};
        if (!lowest || cc < *lowest) lowest = cc;
    }
    labels.add("vmm", vmm);
    labels.add("memory-pools", pools);
    for (const auto& t : handle_types) labels.add("pool-handle." + t, true);
    labels.add("fabric-handles", fabric);
    if (lowest) labels.add("compute-capability", fmt::format("{}.{}", lowest->first, lowest->second));
}

// The clique and cluster of the multi-node NVLink fabric, where every GPU is attached to the same one.
void add_fabric(Labels& labels, const DoctorRun& run) {
    const auto fabric = checks_named(run, kCheckFabric);
    if (fabric.empty()) return;
    std::string clique, cluster;
    for (const CheckResult* c : fabric) {
        const auto* evidence = c->outcome.evidence_as<FabricEvidence>();
        if (evidence == nullptr || !nvml::fabric_attached(evidence->fabric)) return;
        const nvml::FabricInfo* f = &evidence->fabric;
        const std::string this_clique = std::to_string(f->clique_id);
        const std::string this_cluster = nvml::cluster_uuid_text(*f);
        if (!clique.empty() && (this_clique != clique || this_cluster != cluster)) return;
        clique = this_clique, cluster = this_cluster;
    }
    labels.add("fabric.clique", clique);
    if (!cluster.empty()) labels.add("fabric.cluster-uuid", cluster);
}

// The labels of a run's checks.
void add_run(Labels& labels, const DoctorResults& results) {
    const DoctorRun& run = results.run();
    labels.add("doctor", std::string(status_name(results.status())));
    if (run.device_count >= 0) labels.add("gpu-count", std::to_string(run.device_count));
    add_capabilities(labels, run);
    // Only a judgement of every GPU: a skipped or timed-out check (no NVML, a hung call) judged nothing.
    const auto health = checks_named(run, kCheckMemoryHealth);
    const bool every_judged =
        !health.empty() && std::all_of(health.begin(), health.end(), [](const CheckResult* c) { return judged(*c); });
    if (every_judged) labels.add("memory-health", std::string(status_name(worst_status(health))));
    const auto imex = checks_named(run, kCheckImexChannels);
    if (!imex.empty() && judged(*imex.front()))
        labels.add("imex-channel", imex.front()->outcome.status == CheckStatus::pass);
    add_fabric(labels, run);
}

}  // namespace

void NfdRenderer::render(const Report& report, std::ostream& out) const {
    const auto* results = report.results_as<DoctorResults>();
    const bool quick = results != nullptr && results->run().quick;
    // Outside text in a comment is written out (printable): a newline in it would start a label line.
    out << fmt::format("# cumemctl doctor on {} at {} ({} level): node-feature-discovery feature labels\n",
                       printable(report.host), utc_timestamp(report.started), quick ? "quick" : "full");
    if (report.expires) out << "# +expiry-time=" << utc_timestamp(*report.expires) << '\n';
    // Errors as comments (which NFD reads past): a node without a driver still gets doctor=fail.
    for (const auto& e : report.errors) {
        out << "# error: " << printable(e.message) << '\n';
    }
    Labels labels;
    if (results != nullptr) add_run(labels, *results);
    for (const auto& line : labels.lines()) out << line << '\n';
}

}  // namespace cumemctl::doctor
