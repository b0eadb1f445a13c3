#include "gpu/memtest/memtest_verdict.hpp"
#include "report/json_fields.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace cumemctl::gpu::memtest {
namespace {

using Status = CheckStatus;

// The findings with their status and remedy, collected in order of severity.
struct Findings {
    std::vector<std::pair<Status, std::string>> reasons;
    std::vector<std::string> fail_remedies, warn_remedies;

    void add(Status s, std::string reason, std::string remedy) {
        reasons.emplace_back(s, std::move(reason));
        auto& list = s == Status::fail ? fail_remedies : warn_remedies;
        if (std::find(list.begin(), list.end(), remedy) == list.end()) list.push_back(std::move(remedy));
    }
};

std::string plural(long long n, const char* word) {
    return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

void judge_health(const HealthWatch& h, Findings& f, const std::string& reset) {
    const auto uncorrected = std::max(delta(h.before.ecc_uncorrected_volatile, h.after.ecc_uncorrected_volatile),
                                      delta(h.before.ecc_uncorrected_aggregate, h.after.ecc_uncorrected_aggregate));
    if (uncorrected.value_or(0) > 0) {
        f.add(Status::fail, fmt::format("{} during the run", plural(*uncorrected, "uncorrectable ECC error")),
              fmt::format("drain it and reset it ({}, or reboot the node), then run memtest again; if uncorrectable "
                          "errors return, replace the GPU (RMA)",
                          reset));
    }
    const auto& rows = h.after.remapped_rows;
    if (rows && rows->failure) {
        const bool during = !h.before.remapped_rows || !h.before.remapped_rows->failure;
        f.add(Status::fail,
              during ? "a row remapping failed during the run: the GPU has no spare rows left in a bank"
                     : "a row remapping had failed before the run: the GPU has no spare rows left in a bank",
              "drain it and replace it (RMA): memory that cannot be remapped stays faulty");
    }
    for (const unsigned long long xid : h.xids) {
        const bool critical = critical_xid(xid);
        f.add(critical ? Status::fail : Status::warn, fmt::format("XID {} during the run", xid),
              critical ? fmt::format("drain it, reset it and look XID {} up in NVIDIA's XID catalogue; run memtest "
                                     "again after the reset",
                                     xid)
                       : fmt::format("look XID {} up in NVIDIA's XID catalogue and the kernel log (dmesg)", xid));
    }
    const auto corrected = std::max(delta(h.before.ecc_corrected_volatile, h.after.ecc_corrected_volatile),
                                    delta(h.before.ecc_corrected_aggregate, h.after.ecc_corrected_aggregate));
    if (corrected.value_or(0) > 0) {
        f.add(Status::warn, fmt::format("{} during the run", plural(*corrected, "corrected ECC error")),
              "keep it in service but watch it: run memtest again after the next reset; corrected errors that keep "
              "climbing come before a row remapping");
    }
    if (rows && rows->pending) {
        f.add(Status::warn, "a row remapping is pending: it takes effect at the next GPU reset",
              fmt::format("drain it and reset it ({}, or reboot the node) so that the remap takes effect, then run "
                          "memtest again",
                          reset));
    }
}

}  // namespace

Verdict judge(const RunResult& run, const HealthWatch* health, int gpu, const std::string& uuid) {
    const std::string name = uuid.empty() ? fmt::format("GPU {}", gpu) : fmt::format("GPU {} ({})", gpu, uuid);
    Findings f;
    if (run.mismatches > 0) {
        f.add(Status::fail,
              fmt::format("{} held something other than what was written",
                          plural(static_cast<long long>(run.mismatches), "16-byte word")),
              "drain it, reset it and run memtest again with the same seed; if mismatches return at the same "
              "offsets, replace the GPU (RMA) with the offsets and bits of this report");
    }
    const std::string reset = uuid.empty() ? "nvidia-smi -r" : fmt::format("nvidia-smi -r -i {}", uuid);
    if (health != nullptr) judge_health(*health, f, reset);
    Verdict v;
    std::stable_sort(f.reasons.begin(), f.reasons.end(),
                     [](const auto& a, const auto& b) { return status_severity(a.first) > status_severity(b.first); });
    for (const auto& [s, reason] : f.reasons) {
        v.status = worse(v.status, s);
        v.reasons.push_back(reason);
    }
    const auto& remedies = v.status == Status::fail ? f.fail_remedies : f.warn_remedies;
    if (!remedies.empty()) v.remedy = fmt::format("{}: {}", name, fmt::join(remedies, "; "));
    if (!run.yielded.empty()) {
        v.reasons.push_back(fmt::format("gave the memory back early: {}; {} pattern pass{} had run", run.yielded,
                                        run.done.size(), run.done.size() == 1 ? "" : "es"));
    }
    if (run.interrupted_by != 0) {
        v.reasons.push_back(fmt::format("stopped by a signal in {}; {} pattern pass{} had run", run.stopped_in,
                                        run.done.size(), run.done.size() == 1 ? "" : "es"));
    }
    if (v.reasons.empty()) {
        v.reasons.push_back(health != nullptr ? "every word held what was written, and NVML saw no new error"
                                              : "every word held what was written (NVML could not watch the device)");
    }
    return v;
}

nlohmann::json to_json(const Verdict& v) {
    return {{"status", status_name(v.status)}, {"reasons", v.reasons}, {"remedy", text_or_null(v.remedy)}};
}

}  // namespace cumemctl::gpu::memtest
