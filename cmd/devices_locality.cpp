#include "devices_locality.hpp"

#include <fmt/format.h>

namespace cumemctl::cmd {
using namespace gpu;
namespace {

// "unknown (driver 13.0; needs 13.4)" below 13.4, else "unknown (attribute N not answered)".
std::string unknown(const LocalityInfo& l, int attribute) {
    if (!l.driver_has()) return fmt::format("unknown ({})", locality_unknown_reason(l.driver_version));
    return fmt::format("unknown (attribute {} not answered)", attribute);
}

std::string domains_text(const LocalityInfo& l) {
    return l.domains ? std::to_string(*l.domains) : unknown(l, locality::kAttrDomainCount);
}

std::string sms_text(const LocalityInfo& l) {
    if (!l.sms_per_domain) return unknown(l, locality::kAttrSmsPerDomain);
    const auto left = l.sms_left_over();
    return left ? fmt::format("{} ({} of {} left over)", *l.sms_per_domain, *left, *l.sms_total)
                : std::to_string(*l.sms_per_domain);
}

std::string rdma_text(const LocalityInfo& l) {
    if (!l.rdma_with_localized) return unknown(l, locality::kAttrRdmaWithLocalized);
    return *l.rdma_with_localized != 0 ? "yes" : "no (needs RDMA over PCIe)";
}

std::string allocation_text(const LocalityInfo& l) {
    if (!l.driver_has()) return fmt::format("unknown ({})", locality_unknown_reason(l.driver_version));
    if (!l.allocation_works) return "not tried (no domain count)";
    return *l.allocation_works ? "works" : fmt::format("refused ({})", l.allocation_detail);
}

}  // namespace

std::vector<std::vector<std::string>> locality_rows(const std::vector<DeviceInfo>& devices) {
    std::vector<std::vector<std::string>> rows;
    auto row = [&](std::string label, std::string (*cell)(const LocalityInfo&)) {
        std::vector<std::string> r{std::move(label)};
        for (const auto& d : devices) r.push_back(cell(d.locality));
        rows.push_back(std::move(r));
    };
    row("locality domains", domains_text);
    row("SMs per domain", sms_text);
    row("RDMA with localized memory", rdma_text);
    row("localized allocation", allocation_text);
    return rows;
}

void add_locality_metrics(Metrics& out, const DeviceInfo& device, const MetricLabels& labels) {
    const LocalityInfo& l = device.locality;
    if (l.domains) out.add("device_locality_domains", "a device's locality domains (CUDA 13.4)", labels, *l.domains);
    if (l.sms_per_domain) {
        out.add("device_locality_domain_sms", "SMs each locality domain guarantees", labels, *l.sms_per_domain);
    }
    if (l.allocation_works) {
        out.add("device_localized_allocation", "whether a small localized allocation worked (1) or not (0)", labels,
                *l.allocation_works ? 1 : 0);
    }
}

}  // namespace cumemctl::cmd
