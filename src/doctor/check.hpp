// The result model of `doctor`: a check's status, why, what to do, how long it took.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/verdict.hpp"
#include "doctor/evidence.hpp"

namespace cumemctl::doctor {

// The check ids: the catalogue, the checks and the readers (fleet) name checks by these constants,
// never by their text. What a reader relies on in a check's details is marked in its evidence type's
// field description (evidence.hpp, kReadByFleet).
inline constexpr const char* kCheckDriver = "driver";
inline constexpr const char* kCheckDevices = "devices";
inline constexpr const char* kCheckCapabilities = "capabilities";
inline constexpr const char* kCheckPosixFdIpc = "posix-fd-ipc";  // the checks whose second process starts ahead
inline constexpr const char* kCheckIpcPool = "ipc-pool";
// Whether the device's importer (its second process) serves check `id`.
inline bool importer_serves(std::string_view id) {
    return id == kCheckPosixFdIpc || id == kCheckIpcPool;
}
inline constexpr const char* kCheckMemoryHealth = "memory-health";
inline constexpr const char* kCheckHostBandwidth = "host-bandwidth";
inline constexpr const char* kCheckMemoryBandwidth = "memory-bandwidth";
inline constexpr const char* kCheckContext = "context";
inline constexpr const char* kCheckLogicalEndpoints = "logical-endpoints";
inline constexpr const char* kCheckVmm = "vmm";
inline constexpr const char* kCheckPoolTrim = "pool-trim";
inline constexpr const char* kCheckHostAlloc = "host-alloc";  // its failures are never another process's
inline constexpr const char* kCheckFabricAlloc = "fabric-alloc";
inline constexpr const char* kCheckFabric = "fabric";
inline constexpr const char* kCheckImexChannels = "imex-channels";
inline constexpr const char* kCheckImexDomain = "imex-domain";
inline constexpr const char* kCheckPeerAccess = "peer-access";
inline constexpr const char* kCheckInventory = "inventory";
inline constexpr const char* kCheckLocality = "locality";
inline constexpr const char* kCheckGpudirect = "gpudirect";
inline constexpr const char* kCheckXid = "xid";
inline constexpr const char* kCheckPcieLink = "pcie-link";
inline constexpr const char* kCheckNvlink = "nvlink";

// The one verdict type (base/verdict.hpp), as doctor's checks use it.
using cumemctl::CheckStatus;
using cumemctl::kStatusCount;
using cumemctl::parse_status;
using cumemctl::status_fails;
using cumemctl::status_name;
using cumemctl::status_severity;
using cumemctl::statuses_worst_first;

// What a check function returns: its verdict, a one-line reason, the remedy when it is not a pass,
// its evidence (one type a family of checks, evidence.hpp: the report's "details") and who held the GPU
// where that was asked.
struct CheckOutcome {
    CheckStatus status = CheckStatus::pass;
    std::string reason;
    std::string remedy;
    Evidence evidence;
    std::optional<DriverFailure> driver;  // the failed driver call behind a fail, where there is one
    std::string brief;  // a few words of --format line's vocabulary (man doctor); empty: from the driver call
    std::optional<HeldBy> held_by;  // busy.cpp: the processes NVML lists on the device, where it asked

    static CheckOutcome pass(std::string reason, Evidence evidence = {});
    static CheckOutcome warn(std::string reason, std::string remedy, Evidence evidence = {});
    static CheckOutcome fail(std::string reason, std::string remedy, Evidence evidence = {});
    static CheckOutcome skip(std::string reason, Evidence evidence = {});
    static CheckOutcome busy(std::string reason, std::string remedy, Evidence evidence = {});

    // The same outcome with `evidence` instead of its own.
    CheckOutcome with_evidence(Evidence evidence) const;
    // Its evidence of family E, or null where it carries another.
    template <class E>
    const E* evidence_as() const {
        return std::get_if<E>(&evidence);
    }
};

// One check's result as the report carries it: which check, on which device (none for node checks),
// the outcome and the wall-clock seconds it took.
struct CheckResult {
    std::string check;
    std::optional<int> device;
    CheckOutcome outcome;
    double seconds = 0;
};

// Thrown by a check (or by what it calls) when it cannot be tried because something it needs is
// missing, such as a device context that failed earlier: the check is reported as skipped.
class CheckSkipped : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The JSON of one result: check, device, status, reason, remedy, seconds, details, brief (where set),
// driver_call.
nlohmann::json to_json(const CheckResult& result);

}  // namespace cumemctl::doctor
