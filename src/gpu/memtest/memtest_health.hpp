// What NVML saw of a device around a memtest: its memory health before and after (ECC counts, remapped
// rows, retired pages, from nvml/memory_health) and the XID events delivered during the run, where the
// driver gives NVML events.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nvml/memory_health.hpp"

namespace cumemctl::gpu::memtest {

// Registers for a device's XID critical error events when made and collects what came when asked.
// Never throws: where NVML has no events (or refuses them) `unavailable()` says why.
class XidWatch {
public:
    XidWatch(const nvml::Library& nvml, nvml::Device device);
    ~XidWatch();
    XidWatch(const XidWatch&) = delete;
    XidWatch& operator=(const XidWatch&) = delete;

    // The XIDs delivered since the watch began (waits for none).
    std::vector<unsigned long long> collect();
    const std::string& unavailable() const { return unavailable_; }

private:
    const nvml::Library* nvml_;
    nvml::EventSet set_ = nullptr;
    std::string unavailable_;
};

// The device's health before and after, and the XIDs in between.
struct HealthWatch {
    nvml::MemoryHealth before, after;
    std::vector<unsigned long long> xids;
    std::string xid_unavailable;  // why no XIDs could be watched, if so
};

// Whether an XID means the memory or the GPU failed (ECC, row remapping, fallen off the bus, GSP):
// a fail; other XIDs (an application's fault) are reported and warn.
bool critical_xid(unsigned long long xid);

// The change of an optional counter from before to after; nullopt where either is unknown.
std::optional<long long> delta(const std::optional<std::uint64_t>& before, const std::optional<std::uint64_t>& after);

// {"before": health, "after": health, "delta": {ECC counters, remapped rows}, "xids": [...],
//  "xid_unavailable"}.
nlohmann::json to_json(const HealthWatch& watch);

}  // namespace cumemctl::gpu::memtest
