#include "devices_fabric.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace cumemctl::cmd {
namespace {

using nvml::FabricInfo;

// Whether NVML answered with figures (not an error, not NOT_SUPPORTED).
bool has_figures(const FabricInfo& f) {
    return nvml::fabric_answered(f) && f.result == nvml::kSuccess;
}

// Whether the GPU takes part in fabrics at all: NVML's figures, with a state other than "not supported"
// (a GPU without multi-node NVLink, an H200 for one, answers success with that state).
bool fabric_capable(const FabricInfo& f) {
    return has_figures(f) && f.state != nvml::kFabricStateNotSupported;
}

std::string attached_text(const FabricInfo& f) {
    if (!nvml::fabric_answered(f)) return "unknown";
    if (nvml::fabric_attached(f)) return "attached";
    if (f.result != nvml::kSuccess || f.state == nvml::kFabricStateNotSupported) return "not attached (not supported)";
    if (f.state != nvml::kFabricStateCompleted)
        return fmt::format("not attached ({})", nvml::fabric_state_name(f.state));
    if (f.status != nvml::kSuccess) return "not attached (completed with an error)";
    return "not attached (zero cluster UUID)";
}

}  // namespace

std::vector<std::vector<std::string>> fabric_rows(const std::vector<gpu::DeviceInfo>& devices) {
    std::vector<std::vector<std::string>> rows;
    if (std::none_of(devices.begin(), devices.end(), [](const gpu::DeviceInfo& d) { return d.fabric.has_value(); })) {
        return rows;
    }
    auto row = [&](std::string label, auto cell) {
        std::vector<std::string> r{std::move(label)};
        for (const auto& d : devices) r.push_back(d.fabric ? cell(*d.fabric) : std::string("unknown"));
        rows.push_back(std::move(r));
    };
    row("NVLink fabric", attached_text);
    // The rest says nothing where no GPU takes part in fabrics: nine rows of "not-supported" and a zero
    // cluster UUID, which read like a fabric with faults.
    if (std::none_of(devices.begin(), devices.end(),
                     [](const gpu::DeviceInfo& d) { return d.fabric && fabric_capable(*d.fabric); })) {
        return rows;
    }
    row("fabric state", [](const FabricInfo& f) {
        if (!nvml::fabric_answered(f)) return std::string("unknown");
        if (!has_figures(f)) return std::string("not-supported (NVML: Not Supported)");
        return f.state == nvml::kFabricStateCompleted
                   ? fmt::format("{}, {}", nvml::fabric_state_name(f.state), f.status_text)
                   : nvml::fabric_state_name(f.state);
    });
    row("fabric cluster UUID",
        [](const FabricInfo& f) { return has_figures(f) ? nvml::cluster_uuid_text(f) : std::string("-"); });
    row("fabric clique", [](const FabricInfo& f) { return has_figures(f) ? std::to_string(f.clique_id) : "-"; });
    row("fabric health", [](const FabricInfo& f) {
        return has_figures(f) && f.health_summary ? nvml::health_summary_name(*f.health_summary) : std::string("-");
    });
    for (const auto& field : nvml::fabric_health_fields()) {
        std::string label = std::string(field.key);
        std::replace(label.begin(), label.end(), '_', ' ');
        row("fabric " + label, [&field](const FabricInfo& f) {
            return has_figures(f) && f.health_mask
                       ? nvml::health_field_word(field, nvml::health_field_value(*f.health_mask, field))
                       : std::string("-");
        });
    }
    return rows;
}

void add_fabric_metrics(Metrics& out, const gpu::DeviceInfo& d, const MetricLabels& labels) {
    if (!d.fabric || !nvml::fabric_answered(*d.fabric)) return;
    const FabricInfo& f = *d.fabric;
    const bool attached = nvml::fabric_attached(f);
    MetricLabels attached_labels = labels;
    if (attached) {
        attached_labels.emplace_back("cluster_uuid", nvml::cluster_uuid_text(f));
        attached_labels.emplace_back("clique_id", std::to_string(f.clique_id));
    }
    out.add("device_fabric_attached",
            "a GPU is attached to a multi-node NVLink fabric (1: state completed, status success, non-zero "
            "cluster UUID; its domain in cluster_uuid and clique_id) or not (0)",
            std::move(attached_labels), attached ? 1 : 0);
    const bool figures = f.result == nvml::kSuccess;
    out.add("device_fabric_state",
            "a GPU's NVLink fabric state as NVML reports it (0 not supported, 1 not started, 2 in progress, "
            "3 completed)",
            labels, figures ? f.state : nvml::kFabricStateNotSupported);
    if (figures && f.health_summary) {
        out.add("device_fabric_health_overall",
                "a GPU's NVLink fabric health summary (0 not supported, 1 healthy, 2 unhealthy, 3 limited "
                "capacity)",
                labels, *f.health_summary);
    }
    if (!figures || !f.health_mask) return;
    for (const auto& field : nvml::fabric_health_fields()) {
        MetricLabels l = labels;
        l.emplace_back("field", std::string(field.key));
        out.add("device_fabric_health",
                "a field of a GPU's NVLink fabric health mask, as NVML numbers it (0 not supported; 1 true, "
                "2 false; incorrect_configuration: 1 none, 2 and up the reason)",
                std::move(l), nvml::health_field_value(*f.health_mask, field));
    }
}

}  // namespace cumemctl::cmd
