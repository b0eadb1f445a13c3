#include "nvml/memory_health.hpp"

#include <fmt/format.h>

#include "nvml/processes.hpp"

namespace cumemctl::nvml {
namespace {

// Calls an optional entry point; on success runs `take`, else notes why under `field`.
template <class Fn, class Take, class... Args>
void ask(const Library& nvml, MemoryHealth& h, const char* field, const char* call, Fn fn, Take take, Args... args) {
    if (fn == nullptr) {
        h.unavailable.emplace_back(field, fmt::format("{}: not in this NVML", call));
        return;
    }
    if (const Return r = fn(args...); r != kSuccess) {
        h.unavailable.emplace_back(field, nvml.describe(call, r));
        return;
    }
    take();
}

// Memory figures: the v2 call (reserved split out) where there is one, else v1.
void ask_memory(const Library& nvml, Device device, MemoryHealth& h) {
    const Api& api = nvml.api();
    if (api.device_get_memory_info_v2 != nullptr) {
        MemoryV2 m{};
        m.version = kMemoryV2Version;
        if (const Return r = api.device_get_memory_info_v2(device, &m); r == kSuccess) {
            h.total = m.total, h.reserved = m.reserved, h.free = m.free, h.used = m.used;
            h.memory_v2 = true;
            return;
        } else if (api.device_get_memory_info == nullptr) {
            h.unavailable.emplace_back("memory", nvml.describe("nvmlDeviceGetMemoryInfo_v2", r));
            return;
        }
    }
    Memory m{};
    ask(
        nvml, h, "memory", "nvmlDeviceGetMemoryInfo", api.device_get_memory_info,
        [&] { h.total = m.total, h.free = m.free, h.used = m.used; }, device, &m);
}

// Retired pages of both causes (a count: the call with no buffer) and the pending flag.
void ask_retired_pages(const Library& nvml, Device device, MemoryHealth& h) {
    const Api& api = nvml.api();
    RetiredPages pages;
    for (const int cause : {kRetiredMultipleSingleBitEcc, kRetiredDoubleBitEcc}) {
        if (api.device_get_retired_pages == nullptr) {
            h.unavailable.emplace_back("retired_pages", "nvmlDeviceGetRetiredPages: not in this NVML");
            return;
        }
        unsigned int count = 0;
        const Return r = api.device_get_retired_pages(device, cause, &count, nullptr);
        if (r != kSuccess && r != kErrorInsufficientSize) {
            h.unavailable.emplace_back("retired_pages", nvml.describe("nvmlDeviceGetRetiredPages", r));
            return;
        }
        (cause == kRetiredDoubleBitEcc ? pages.double_bit : pages.single_bit) = count;
    }
    int pending = 0;
    ask(
        nvml, h, "retired_pages_pending", "nvmlDeviceGetRetiredPagesPendingStatus",
        api.device_get_retired_pages_pending, [&] { pages.pending = pending != 0; }, device, &pending);
    h.retired_pages = pages;
}

}  // namespace

MemoryHealth query_memory_figures(const Library& nvml, Device device) {
    MemoryHealth h;
    ask_memory(nvml, device, h);
    return h;
}

MemoryHealth query_memory_health(const Library& nvml, Device device) {
    const Api& api = nvml.api();
    MemoryHealth h;
    ask_memory(nvml, device, h);
    Bar1Memory bar1{};
    ask(
        nvml, h, "bar1_total_bytes", "nvmlDeviceGetBAR1MemoryInfo", api.device_get_bar1_memory_info,
        [&] { h.bar1_total = bar1.bar1Total; }, device, &bar1);
    int ecc_current = 0, ecc_pending = 0;
    ask(
        nvml, h, "ecc", "nvmlDeviceGetEccMode", api.device_get_ecc_mode,
        [&] { h.ecc_enabled = ecc_current != 0, h.ecc_pending = ecc_pending != 0; }, device, &ecc_current,
        &ecc_pending);
    if (h.ecc_enabled.value_or(false)) {
        // The four ECC counters: corrected or not, since the last reboot (volatile) or ever (aggregate).
        struct EccCounter {
            const char* name;
            int error_type;
            int counter_type;
            std::optional<std::uint64_t> MemoryHealth::*field;
        };
        for (const EccCounter& c :
             {EccCounter{"ecc_corrected_volatile", kEccCorrected, kEccVolatile, &MemoryHealth::ecc_corrected_volatile},
              EccCounter{"ecc_corrected_aggregate", kEccCorrected, kEccAggregate,
                         &MemoryHealth::ecc_corrected_aggregate},
              EccCounter{"ecc_uncorrected_volatile", kEccUncorrected, kEccVolatile,
                         &MemoryHealth::ecc_uncorrected_volatile},
              EccCounter{"ecc_uncorrected_aggregate", kEccUncorrected, kEccAggregate,
                         &MemoryHealth::ecc_uncorrected_aggregate}}) {
            unsigned long long count = 0;
            ask(
                nvml, h, c.name, "nvmlDeviceGetTotalEccErrors", api.device_get_total_ecc_errors,
                [&] { h.*c.field = count; }, device, c.error_type, c.counter_type, &count);
        }
    }
    unsigned corrected = 0, uncorrected = 0, pending = 0, failure = 0;
    ask(
        nvml, h, "remapped_rows", "nvmlDeviceGetRemappedRows", api.device_get_remapped_rows,
        [&] {
            h.remapped_rows = RemappedRows{corrected, uncorrected, pending != 0, failure != 0};
        },
        device, &corrected, &uncorrected, &pending, &failure);
    ask_retired_pages(nvml, device, h);
    int persistence = 0;
    ask(
        nvml, h, "persistence_mode", "nvmlDeviceGetPersistenceMode", api.device_get_persistence_mode,
        [&] { h.persistence_mode = persistence != 0; }, device, &persistence);
    unsigned mig_current = 0, mig_pending = 0;
    ask(
        nvml, h, "mig", "nvmlDeviceGetMigMode", api.device_get_mig_mode,
        [&] { h.mig_enabled = mig_current != 0, h.mig_pending = mig_pending != 0; }, device, &mig_current,
        &mig_pending);
    return h;
}

std::optional<std::uint64_t> process_memory(const Library& nvml, Device device, pid_t pid, std::string* why) {
    const ProcessList list = list_processes(nvml, device);
    if (!list.listed) {
        if (why != nullptr) *why = list.why;
        return std::nullopt;
    }
    for (const GpuProcess& p : list.processes) {
        if (p.pid != static_cast<unsigned>(pid)) continue;
        if (!p.used && why != nullptr) *why = "NVML lists this process but not its memory";
        return p.used;
    }
    if (why != nullptr) {
        *why = fmt::format("NVML does not list process {} (in a container NVML lists the host's process ids)", pid);
    }
    return std::nullopt;
}

HealthVerdict judge_memory_health(const MemoryHealth& h) {
    using S = CheckStatus;
    if (h.remapped_rows && h.remapped_rows->failure) {
        return {S::fail, "a row remapping failed: the GPU has run out of spare rows for a bank"};
    }
    if (h.ecc_uncorrected_volatile.value_or(0) > 0) {
        return {S::fail, fmt::format("{} uncorrectable ECC error{} since the last reset", *h.ecc_uncorrected_volatile,
                                     *h.ecc_uncorrected_volatile == 1 ? "" : "s")};
    }
    if (h.remapped_rows && h.remapped_rows->pending) {
        return {S::warn, "a row remapping is pending: it takes effect at the next GPU reset"};
    }
    std::string reason = "no pending or failed row remapping";
    if (!h.remapped_rows) reason = "NVML gives no remapped rows here";
    if (h.ecc_enabled == false) {
        reason += "; ECC is off";
    } else if (h.ecc_uncorrected_volatile) {
        reason += ", no uncorrectable ECC error since the last reset";
    }
    if (h.remapped_rows) {
        reason += fmt::format(" ({} rows remapped for correctable, {} for uncorrectable errors)",
                              h.remapped_rows->corrected, h.remapped_rows->uncorrected);
    }
    return {S::pass, reason};
}

nlohmann::json to_json(const MemoryHealth& h) {
    auto opt = [](const auto& v) -> nlohmann::json { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    nlohmann::json j{{"total_bytes", opt(h.total)},
                     {"reserved_bytes", opt(h.reserved)},
                     {"free_bytes", opt(h.free)},
                     {"used_bytes", opt(h.used)},
                     {"memory_info", h.memory_v2 ? "v2" : (h.total ? "v1" : "none")},
                     {"bar1_total_bytes", opt(h.bar1_total)},
                     {"ecc",
                      {{"enabled", opt(h.ecc_enabled)},
                       {"pending", opt(h.ecc_pending)},
                       {"uncorrected_volatile", opt(h.ecc_uncorrected_volatile)},
                       {"uncorrected_aggregate", opt(h.ecc_uncorrected_aggregate)},
                       {"corrected_volatile", opt(h.ecc_corrected_volatile)},
                       {"corrected_aggregate", opt(h.ecc_corrected_aggregate)}}},
                     {"persistence_mode", opt(h.persistence_mode)},
                     {"mig", {{"enabled", opt(h.mig_enabled)}, {"pending", opt(h.mig_pending)}}}};
    j["remapped_rows"] = to_json(h.remapped_rows);
    j["retired_pages"] = to_json(h.retired_pages);
    nlohmann::json unavailable = nlohmann::json::object();
    for (const auto& [field, why] : h.unavailable) unavailable[field] = why;
    j["unavailable"] = unavailable;
    return j;
}

nlohmann::json to_json(const std::optional<RemappedRows>& rows) {
    if (!rows) return nullptr;
    return {{"corrected", rows->corrected},
            {"uncorrected", rows->uncorrected},
            {"pending", rows->pending},
            {"failure", rows->failure}};
}

nlohmann::json to_json(const std::optional<RetiredPages>& pages) {
    if (!pages) return nullptr;
    return {{"single_bit", pages->single_bit}, {"double_bit", pages->double_bit}, {"pending", pages->pending}};
}

}  // namespace cumemctl::nvml
