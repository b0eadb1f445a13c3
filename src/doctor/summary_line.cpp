#include "doctor/summary_line.hpp"

#include <fmt/format.h>

#include "base/enum_words.hpp"
#include "report/gpu_name.hpp"

namespace cumemctl::doctor {

namespace {

// A brief's word where the status's own would say too little; pass and skip keep theirs.
constexpr auto kBriefWords = enum_words<CheckStatus>({{CheckStatus::fail, "failed"},
                                                      {CheckStatus::busy, "busy"},
                                                      {CheckStatus::timeout, "timeout"},
                                                      {CheckStatus::warn, "warning"}},
                                                     "");

}  // namespace

std::string brief_of(const CheckResult& result) {
    const CheckOutcome& o = result.outcome;
    if (!o.brief.empty()) return o.brief;
    if (o.driver) {
        std::string name = o.driver->name;
        if (name.rfind("CUDA_ERROR_", 0) == 0) name = name.substr(11);
        return fmt::format("{} {}", o.driver->call, name);
    }
    // Its reason says more than a status word ("warning" said nothing); summary_line cuts it to fit.
    if (!o.reason.empty()) return o.reason;
    return std::string(kBriefWords.find(o.status).value_or(status_name(o.status)));
}

std::string summary_line(const DoctorRun& run, std::size_t width) {
    const CheckResult* worst = nullptr;
    int others = 0;
    for (const CheckResult& r : run.results) {
        // Fail first, then timeout, busy, warn; passes and skips are not named.
        const int s = status_severity(r.outcome.status);
        if (s < status_severity(CheckStatus::warn)) continue;
        if (worst == nullptr || s > status_severity(worst->outcome.status)) worst = &r;
        ++others;
    }
    if (worst == nullptr) {
        const std::size_t gpus = run.devices.size();
        return fmt::format("cumemctl: pass {} check{} on {} GPU{}{}", run.results.size(),
                           run.results.size() == 1 ? "" : "s", gpus, gpus == 1 ? "" : "s", run.quick ? " quick" : "");
    }
    --others;
    std::string head = fmt::format("cumemctl: {} {}", status_name(worst->outcome.status), worst->check);
    if (worst->device) {
        const gpu::DeviceIdentity id = identity_of(run, *worst->device);
        head += " " + gpu_name(id.nvml_index, id.pci_bus_id, id.ordinal);
    }
    const std::string tail = others > 0 ? fmt::format(" (+{} more)", others) : "";
    std::string brief = brief_of(*worst);
    // The brief gives way: status, check, GPU and count are what a script matches.
    const std::size_t fixed = head.size() + 1 + tail.size();
    if (fixed + brief.size() > width) brief = fixed + 3 < width ? brief.substr(0, width - fixed - 3) + "..." : "";
    return brief.empty() ? head + tail : head + " " + brief + tail;
}

}  // namespace cumemctl::doctor
