// The fake NVML: a shared library that exports the NVML entry points cumemctl uses, driven by the fake
// driver's profile (FAKECUDA_PROFILE), loaded through the real seam (--libnvml or CUMEMCTL_LIBNVML).
// Its devices come in the reverse of the profile's (the driver's) order, as NVML's PCI order differs
// from CUDA's, so that only matching by UUID finds the right one. A device's optional "nvml" object in
// the profile gives its memory health: reserved, used (beyond the profile's baseline_used), uuid,
// bar1_total, ecc_enabled, ecc_pending, ecc_{un,}corrected_{volatile,aggregate}, remapped_rows {corrected,
// uncorrected, pending, failure}, persistence_mode, mig_enabled, mig_pending, processes [{pid, used, name}],
// retired_pages {single_bit, double_bit, pending} (absent: retired pages are not supported, as on an
// H100 or H200), xid [N...] (XID critical error events delivered to event sets), and "after_mark" (the
// same fields, in force once FAKENVML_AFTER_MARK's file exists);
// FAKENVML_SELF_USED, FAKENVML_CHILDREN_USED and FAKENVML_PID_FILES list more processes (list_processes);
// FAKENVML_INJECT="call=code,call:ORDINAL=code" makes a call fail (for every device, or for the profile's device
// ORDINAL); a code of "hang" makes it never return. FAKENVML_COST_MS="init:MS" makes an nvmlInit_v2 that starts NVML
// (the first, or the first after the last nvmlShutdown) take MS milliseconds (as the real one opens and queries every
// GPU), as FAKECUDA_COST_MS does for cuInit. A device's "fabric" object gives its multi-node NVLink fabric info (see
// the fabric block below), its "pcie", "memory_bus_width", "max_*_clock_mhz" and "c2c" the PCIe link, memory bus,
// clocks and Grace C2C links (see the link block at the end; the current PCIe generation and the replay counter follow
// the fake driver's copies in this process). Linked a second time with minimal.map, it exports only the required entry
// points (an older NVML): the entry points from nvmlSystemGetDriverVersion on are the optional ones.
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../fakecuda/device_nodes.hpp"
#include "../fakecuda/profile_json.hpp"
#include "nvml/nvml_api.hpp"

namespace {

using namespace cumemctl::nvml;

// One device: its profile ordinal and what NVML answers for it.
struct FakeDevice {
    int ordinal = 0;
    std::string uuid;         // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
    std::string driver_uuid;  // the fake driver's UUID of it, 32 hex digits as the profile gives it
    nlohmann::json nvml;
    unsigned long long total = 0, reserved = 0, used = 0;
};

struct State {
    bool initialised = false;
    int init_count = 0;
    std::vector<FakeDevice> devices;  // in NVML's order
    std::map<std::string, Return> inject;
    std::string error;
};

// An injected "hang": the call never returns.
constexpr Return kHang = -1;

State& state() {
    static State s;
    return s;
}

std::string format_uuid(const std::string& hex) {
    if (hex.size() != 32) return "GPU-" + hex;
    return "GPU-" + hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" + hex.substr(16, 4) +
           "-" + hex.substr(20);
}

void parse_inject(State& s) {
    s.inject.clear();
    const char* env = std::getenv("FAKENVML_INJECT");
    if (env == nullptr) return;
    std::string text = env;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find(',', start);
        if (end == std::string::npos) end = text.size();
        const std::string item = text.substr(start, end - start);
        const size_t eq = item.find('=');
        if (eq == std::string::npos) {
            // skip
        } else if (item.substr(eq + 1) == "hang") {
            s.inject[item.substr(0, eq)] = kHang;
        } else {
            s.inject[item.substr(0, eq)] = std::atoi(item.c_str() + eq + 1);
        }
        start = end + 1;
    }
}

Return load_profile(State& s) {
    const char* path = std::getenv("FAKECUDA_PROFILE");
    if (path == nullptr) return kErrorDriverNotLoaded;
    try {
        const nlohmann::json profile = fake::read_profile(path);
        int ordinal = 0;
        const auto& devices = profile.at("devices");
        const int count = static_cast<int>(devices.size());
        for (const auto& d : devices) {
            FakeDevice f;
            f.ordinal = ordinal++;
            // A GPU whose device node this process may not open is not listed (device_nodes.hpp); the
            // others keep NVML's order, renumbered from 0.
            if (!fake::device_node_allowed(count - 1 - f.ordinal)) continue;
            f.nvml = d.value("nvml", nlohmann::json::object());
            // "nvml": {"uuid": ...} gives NVML another UUID than the driver's (a device NVML does not list).
            f.uuid = format_uuid(f.nvml.value("uuid", d.at("uuid").get<std::string>()));
            f.driver_uuid = d.at("uuid").get<std::string>();
            f.reserved = f.nvml.value("reserved", 644939776ULL);
            f.total = d.at("total").get<unsigned long long>() + f.reserved;
            f.used = d.value("baseline_used", 0ULL) + f.nvml.value("used", 0ULL);
            s.devices.insert(s.devices.begin(), f);  // NVML's order: the reverse of the driver's
        }
    } catch (const fake::ProfileMissing&) {
        return kErrorDriverNotLoaded;
    } catch (const std::exception&) {  // not JSON, not of a profile's shape, or a bad override
        return kErrorUnknown;
    }
    return kSuccess;
}

// Never returns: a call injected as "hang" (a hung GPU) says so and sleeps until the process ends.
[[noreturn]] void hang(const char* call) {
    std::fprintf(stderr, "fakenvml: hang %s (pid %d)\n", call, static_cast<int>(getpid()));
    std::fflush(stderr);
    while (true) sleep(3600);
}

// The injected result for `call` on device `d` (or any device), else kSuccess; "hang" never returns.
Return injected(const char* call, const FakeDevice* d = nullptr) {
    const auto& inject = state().inject;
    Return r = kSuccess;
    if (d != nullptr) {
        if (auto it = inject.find(std::string(call) + ":" + std::to_string(d->ordinal)); it != inject.end()) {
            r = it->second;
        }
    }
    if (r == kSuccess) {
        if (auto it = inject.find(call); it != inject.end()) r = it->second;
    }
    if (r == kHang) hang(call);
    return r;
}

FakeDevice* lookup(Device device) {
    auto* d = reinterpret_cast<FakeDevice*>(device);
    for (auto& f : state().devices) {
        if (&f == d) return d;
    }
    return nullptr;
}

#define FAKE_DEVICE_CALL(name)                            \
    if (!state().initialised) return kErrorUninitialized; \
    FakeDevice* d = lookup(device);                       \
    if (d == nullptr) return kErrorInvalidArgument;       \
    if (const Return injected_result = injected(name, d); injected_result != kSuccess) return injected_result;

// A device's "nvml" object as it is now: with its "after_mark" object merged in (RFC 7386) once the
// file that FAKENVML_AFTER_MARK names exists (the fake driver's FAKECUDA_MARK_AFTER_LAUNCHES makes it
// during a run), so that counters change while a command runs.
nlohmann::json now(const FakeDevice* d) {
    nlohmann::json j = d->nvml;
    const char* mark = std::getenv("FAKENVML_AFTER_MARK");
    if (mark != nullptr && access(mark, F_OK) == 0 && j.contains("after_mark")) j.merge_patch(j["after_mark"]);
    return j;
}

// A device's value at `key` of its "nvml" object (as it is now), or `fallback`.
template <class T>
T value(const FakeDevice* d, const char* key, T fallback) {
    return now(d).value(key, fallback);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) Return nvmlInit_v2() {
    State& s = state();
    parse_inject(s);
    if (const Return r = injected("nvmlInit_v2"); r != kSuccess) return r;
    if (s.init_count == 0) {
        s.devices.clear();
        if (const char* cost = std::getenv("FAKENVML_COST_MS"); cost != nullptr && *cost != '\0') {
            const char* digits = cost + 5;
            if (std::strncmp(cost, "init:", 5) != 0 || *digits == '\0' ||
                std::strspn(digits, "0123456789") != std::strlen(digits)) {
                std::fprintf(stderr, "fakenvml: FAKENVML_COST_MS: expected init:MS, got '%s'\n", cost);
                std::abort();
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(cost + 5)));
        }
        if (const Return r = load_profile(s); r != kSuccess) return r;
    }
    ++s.init_count;
    s.initialised = true;
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlShutdown() {
    State& s = state();
    if (!s.initialised) return kErrorUninitialized;
    if (--s.init_count == 0) s.initialised = false;
    return kSuccess;
}

__attribute__((visibility("default"))) const char* nvmlErrorString(Return r) {
    switch (r) {
        case kSuccess:
            return "Success";
        case kErrorUninitialized:
            return "Uninitialized";
        case kErrorInvalidArgument:
            return "Invalid Argument";
        case kErrorNotSupported:
            return "Not Supported";
        case kErrorNoPermission:
            return "Insufficient Permissions";
        case kErrorNotFound:
            return "Not Found";
        case kErrorInsufficientSize:
            return "Insufficient Size";
        case kErrorTimeout:
            return "Timeout";
        case kErrorDriverNotLoaded:
            return "Driver Not Loaded";
        case kErrorGpuIsLost:
            return "GPU is lost";
        case kErrorResetRequired:
            return "GPU requires restart";
        case kErrorFunctionNotFound:
            return "Function Not Found";
        case kErrorInsufficientResources:
            return "Insufficient Resources";
        case kErrorArgumentVersionMismatch:
            return "Argument version mismatch";
        default:
            return "Unknown Error";
    }
}

__attribute__((visibility("default"))) Return nvmlDeviceGetCount_v2(unsigned int* count) {
    if (!state().initialised) return kErrorUninitialized;
    if (const Return r = injected("nvmlDeviceGetCount_v2"); r != kSuccess) return r;
    *count = static_cast<unsigned int>(state().devices.size());
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetHandleByIndex_v2(unsigned int index, Device* device) {
    if (!state().initialised) return kErrorUninitialized;
    if (index >= state().devices.size()) return kErrorInvalidArgument;
    FakeDevice* d = &state().devices[index];
    if (const Return r = injected("nvmlDeviceGetHandleByIndex_v2", d); r != kSuccess) return r;
    *device = reinterpret_cast<Device>(d);
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetUUID(Device device, char* uuid, unsigned int length) {
    FAKE_DEVICE_CALL("nvmlDeviceGetUUID")
    if (length < d->uuid.size() + 1) return kErrorInsufficientSize;
    std::memcpy(uuid, d->uuid.c_str(), d->uuid.size() + 1);
    return kSuccess;
}

// The device's /dev/nvidiaN: N is its NVML index among all of the profile's GPUs, as device_nodes.hpp
// numbers the nodes and the real driver does by default (a process shown fewer GPUs keeps their
// nodes' numbers), unless its "nvml" object says "minor".
__attribute__((visibility("default"))) Return nvmlDeviceGetMinorNumber(Device device, unsigned int* minor) {
    FAKE_DEVICE_CALL("nvmlDeviceGetMinorNumber")
    static const int profile_devices = [] {
        const char* path = std::getenv("FAKECUDA_PROFILE");
        try {
            if (path == nullptr) return static_cast<int>(state().devices.size());
            return static_cast<int>(fake::read_profile(path).at("devices").size());
        } catch (const std::exception&) {
            return static_cast<int>(state().devices.size());
        }
    }();
    *minor = d->nvml.value("minor", static_cast<unsigned int>(profile_devices - 1 - d->ordinal));
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlSystemGetDriverVersion(char* version, unsigned int length) {
    if (!state().initialised) return kErrorUninitialized;
    const char* v = "580.159.04";
    if (length < std::strlen(v) + 1) return kErrorInsufficientSize;
    std::strcpy(version, v);
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetMemoryInfo(Device device, Memory* memory) {
    FAKE_DEVICE_CALL("nvmlDeviceGetMemoryInfo")
    memory->total = d->total;
    memory->used = d->used + d->reserved;
    memory->free = d->total - memory->used;
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetMemoryInfo_v2(Device device, MemoryV2* memory) {
    FAKE_DEVICE_CALL("nvmlDeviceGetMemoryInfo_v2")
    if (memory->version != kMemoryV2Version) return kErrorArgumentVersionMismatch;
    memory->total = d->total;
    memory->reserved = d->reserved;
    memory->used = d->used;
    memory->free = d->total - d->reserved - d->used;
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetBAR1MemoryInfo(Device device, Bar1Memory* bar1) {
    FAKE_DEVICE_CALL("nvmlDeviceGetBAR1MemoryInfo")
    bar1->bar1Total = value(d, "bar1_total", 274877906944ULL);
    bar1->bar1Used = 0;
    bar1->bar1Free = bar1->bar1Total;
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetEccMode(Device device, int* current, int* pending) {
    FAKE_DEVICE_CALL("nvmlDeviceGetEccMode")
    *current = value(d, "ecc_enabled", 1);
    *pending = value(d, "ecc_pending", *current);
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetTotalEccErrors(Device device, int type, int counter,
                                                                          unsigned long long* count) {
    FAKE_DEVICE_CALL("nvmlDeviceGetTotalEccErrors")
    if (value(d, "ecc_enabled", 1) == 0) return kErrorNotSupported;
    const char* key = type == kEccUncorrected
                          ? (counter == kEccVolatile ? "ecc_uncorrected_volatile" : "ecc_uncorrected_aggregate")
                          : (counter == kEccVolatile ? "ecc_corrected_volatile" : "ecc_corrected_aggregate");
    *count = value(d, key, 0ULL);
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetRemappedRows(Device device, unsigned int* corrected,
                                                                        unsigned int* uncorrected,
                                                                        unsigned int* pending, unsigned int* failure) {
    FAKE_DEVICE_CALL("nvmlDeviceGetRemappedRows")
    const auto rows = now(d).value("remapped_rows", nlohmann::json::object());
    *corrected = rows.value("corrected", 0U);
    *uncorrected = rows.value("uncorrected", 0U);
    *pending = rows.value("pending", 0U);
    *failure = rows.value("failure", 0U);
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetPersistenceMode(Device device, int* mode) {
    FAKE_DEVICE_CALL("nvmlDeviceGetPersistenceMode")
    *mode = value(d, "persistence_mode", 1);
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetMigMode(Device device, unsigned int* current,
                                                                   unsigned int* pending) {
    FAKE_DEVICE_CALL("nvmlDeviceGetMigMode")
    *current = value(d, "mig_enabled", 0U);
    *pending = value(d, "mig_pending", *current);
    return kSuccess;
}

}  // extern "C"

namespace {

// The live child processes of the calling process, from /proc/PID/stat (the parent's pid after the name).
std::vector<unsigned> children_of_caller() {
    std::vector<unsigned> out;
    DIR* proc = opendir("/proc");
    if (proc == nullptr) return out;
    while (const dirent* e = readdir(proc)) {
        const unsigned pid = static_cast<unsigned>(std::strtoul(e->d_name, nullptr, 10));
        if (pid == 0) continue;
        // read(2), not a stream: a process that ends meanwhile fails the read (ESRCH), which a stream
        // would throw out of this extern "C" library into the caller.
        std::string stat;
        const int fd = open(("/proc/" + std::string(e->d_name) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        char buffer[1024];
        const ssize_t n = read(fd, buffer, sizeof buffer);
        close(fd);
        if (n <= 0) continue;
        stat.assign(buffer, static_cast<std::size_t>(n));
        const auto paren = stat.rfind(')');
        char state = 0;
        int ppid = 0;
        if (paren != std::string::npos && std::sscanf(stat.c_str() + paren + 1, " %c %d", &state, &ppid) == 2 &&
            ppid == getpid())
            out.push_back(pid);
    }
    closedir(proc);
    return out;
}

// The pids that the files of FAKENVML_PID_FILES ("FILE FILE ...") hold, one number each: those of
// other processes (a launcher wrote them), listed on every device. A file not there yet holds none.
std::vector<unsigned> pids_in_files() {
    std::vector<unsigned> out;
    const char* files = std::getenv("FAKENVML_PID_FILES");
    if (files == nullptr) return out;
    std::istringstream names(files);
    std::string name;
    while (names >> name) {
        std::ifstream in(name);
        unsigned pid = 0;
        if (in >> pid && pid != 0) out.push_back(pid);
    }
    return out;
}

// Lists the profile's "processes" ([{"pid", "used", "name"}]; "used": null is a process whose memory NVML
// cannot give) in the record `Info` of the entry point; FAKENVML_SELF_USED=BYTES lists the calling process
// too, with that much memory, FAKENVML_CHILDREN_USED=BYTES each live child of the calling process, and
// FAKENVML_PID_FILES the pids in its files (pids_in_files), with 1 GiB each.
template <class Info>
Return list_processes(const FakeDevice* d, unsigned int* count, Info* infos) {
    std::vector<Info> list;
    for (const auto& p : now(d).value("processes", nlohmann::json::array())) {
        Info info{};
        info.pid = p.at("pid").get<unsigned>();
        info.usedGpuMemory = p.at("used").is_null() ? kValueNotAvailable : p.at("used").get<unsigned long long>();
        list.push_back(info);
    }
    if (const char* self = std::getenv("FAKENVML_SELF_USED"); self != nullptr) {
        Info info{};
        info.pid = static_cast<unsigned>(getpid());
        info.usedGpuMemory = std::strtoull(self, nullptr, 10);
        list.push_back(info);
    }
    if (const char* children = std::getenv("FAKENVML_CHILDREN_USED"); children != nullptr) {
        for (const unsigned pid : children_of_caller()) {
            Info info{};
            info.pid = pid;
            info.usedGpuMemory = std::strtoull(children, nullptr, 10);
            list.push_back(info);
        }
    }
    for (const unsigned pid : pids_in_files()) {
        Info info{};
        info.pid = pid;
        info.usedGpuMemory = 1ULL << 30;
        list.push_back(info);
    }
    if (infos == nullptr || *count < list.size()) {
        const bool empty = list.empty();
        *count = static_cast<unsigned int>(list.size());
        return empty ? kSuccess : kErrorInsufficientSize;
    }
    for (size_t i = 0; i < list.size(); ++i) infos[i] = list[i];
    *count = static_cast<unsigned int>(list.size());
    return kSuccess;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) Return nvmlDeviceGetComputeRunningProcesses_v3(Device device,
                                                                                      unsigned int* count,
                                                                                      ProcessInfo* infos) {
    FAKE_DEVICE_CALL("nvmlDeviceGetComputeRunningProcesses_v3")
    return list_processes(d, count, infos);
}

// The unversioned entry point of older NVMLs, with the v1 record (pid and memory only).
__attribute__((visibility("default"))) Return nvmlDeviceGetComputeRunningProcesses(Device device, unsigned int* count,
                                                                                   ProcessInfoV1* infos) {
    FAKE_DEVICE_CALL("nvmlDeviceGetComputeRunningProcesses")
    return list_processes(d, count, infos);
}

// The name of a process the profile lists on any device (its "name"), or this process's executable;
// NVML_ERROR_NOT_FOUND for any other pid.
__attribute__((visibility("default"))) Return nvmlSystemGetProcessName(unsigned int pid, char* name,
                                                                       unsigned int length) {
    if (!state().initialised) return kErrorUninitialized;
    if (const Return r = injected("nvmlSystemGetProcessName"); r != kSuccess) return r;
    std::string found;
    for (const FakeDevice& d : state().devices) {
        for (const auto& p : now(&d).value("processes", nlohmann::json::array())) {
            if (p.at("pid").get<unsigned>() == pid && p.contains("name")) found = p.at("name").get<std::string>();
        }
    }
    if (found.empty() && pid == static_cast<unsigned>(getpid())) {
        char exe[4096] = {};
        if (readlink("/proc/self/exe", exe, sizeof exe - 1) > 0) found = exe;
    }
    if (found.empty()) return kErrorNotFound;
    if (length == 0) return kErrorInsufficientSize;
    // NVML cuts a name longer than the buffer.
    const size_t n = std::min<size_t>(found.size(), length - 1);
    std::memcpy(name, found.data(), n);
    name[n] = '\0';
    return kSuccess;
}

// Retired pages: the profile's "retired_pages" {"single_bit": N, "double_bit": N, "pending": 0|1};
// Not Supported without it (GPUs that remap rows instead).
__attribute__((visibility("default"))) Return nvmlDeviceGetRetiredPages(Device device, int cause, unsigned int* count,
                                                                        unsigned long long* addresses) {
    FAKE_DEVICE_CALL("nvmlDeviceGetRetiredPages")
    const auto j = now(d);
    if (!j.contains("retired_pages")) return kErrorNotSupported;
    const unsigned n = j["retired_pages"].value(cause == 0 ? "single_bit" : "double_bit", 0U);
    if (addresses == nullptr || *count < n) {
        *count = n;
        return n == 0 ? kSuccess : kErrorInsufficientSize;
    }
    for (unsigned i = 0; i < n; ++i) addresses[i] = 0x100000ULL * (i + 1);
    *count = n;
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetRetiredPagesPendingStatus(Device device, int* pending) {
    FAKE_DEVICE_CALL("nvmlDeviceGetRetiredPagesPendingStatus")
    const auto j = now(d);
    if (!j.contains("retired_pages")) return kErrorNotSupported;
    *pending = j["retired_pages"].value("pending", 0);
    return kSuccess;
}

// Event sets: a set holds the devices registered with it and how many of each device's "xid" events it
// has delivered; nvmlEventSetWait_v2 gives the next one at once, or times out (10) when none is left.
struct FakeEventSet {
    std::vector<std::pair<FakeDevice*, std::size_t>> devices;
};
FakeEventSet* fake_set(EventSet set) {
    return reinterpret_cast<FakeEventSet*>(set);
}

__attribute__((visibility("default"))) Return nvmlEventSetCreate(EventSet* set) {
    if (!state().initialised) return kErrorUninitialized;
    if (const Return r = injected("nvmlEventSetCreate"); r != kSuccess) return r;
    *set = reinterpret_cast<EventSet>(new FakeEventSet);
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetSupportedEventTypes(Device device,
                                                                               unsigned long long* types) {
    FAKE_DEVICE_CALL("nvmlDeviceGetSupportedEventTypes")
    *types = 0x8ULL | 0x1ULL | 0x2ULL;
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceRegisterEvents(Device device, unsigned long long types,
                                                                       EventSet set) {
    FAKE_DEVICE_CALL("nvmlDeviceRegisterEvents")
    if (set == nullptr || (types & 0x8ULL) == 0) return kErrorInvalidArgument;
    fake_set(set)->devices.emplace_back(d, now(d).value("xid", nlohmann::json::array()).size());  // events from now on
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlEventSetWait_v2(EventSet set, EventData* data,
                                                                  unsigned int timeout_ms) {
    (void)timeout_ms;
    if (!state().initialised) return kErrorUninitialized;
    if (set == nullptr || data == nullptr) return kErrorInvalidArgument;
    for (auto& [d, delivered] : fake_set(set)->devices) {
        const auto xids = now(d).value("xid", nlohmann::json::array());
        if (delivered >= xids.size()) continue;
        *data = EventData{reinterpret_cast<Device>(d), 0x8ULL, xids[delivered++].get<unsigned long long>(), 0xffffffffU,
                          0xffffffffU};
        return kSuccess;
    }
    return kErrorTimeout;
}

__attribute__((visibility("default"))) Return nvmlEventSetFree(EventSet set) {
    if (!state().initialised) return kErrorUninitialized;
    delete fake_set(set);
    return kSuccess;
}

}  // extern "C"

// ---- GPU fabric info (multi-node NVLink) ----
namespace {

// A device's "nvml": {"fabric": {...}} gives what NVML answers: "state" (0 not supported, 1 not
// started, 2 in progress, 3 completed), "status" (an NVML return code), "cluster_uuid" (32 hex digits),
// "clique_id", "health_mask", "health_summary", and "api": "v3" (default: the V call takes v3 and v2, as
// R580 does), "v2" (a 12.x library: the V call answers ARGUMENT_VERSION_MISMATCH to v3) or "v1" (the V
// call answers FUNCTION_NOT_FOUND; only nvmlDeviceGetGpuFabricInfo works). Without "fabric" a device
// answers as the standalone H200 does (mnnvl-facts.md §1.4, [H200-probe]): success, state NOT_SUPPORTED,
// everything zero. FAKENVML_INJECT=nvmlDeviceGetGpuFabricInfoV=3 gives the other shape of "not attached".

// The fabric fields of a device's profile, filled into whichever version was asked for.
template <class Info>
void fill_fabric(const FakeDevice* d, Info& info) {
    const auto f = d->nvml.value("fabric", nlohmann::json::object());
    const std::string hex = f.value("cluster_uuid", std::string(32, '0'));
    for (unsigned i = 0; i < kFabricUuidLength && 2 * i + 1 < hex.size(); ++i) {
        info.clusterUuid[i] = static_cast<unsigned char>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
    }
    info.status = f.value("status", 0);
    info.cliqueId = f.value("clique_id", 0U);
    info.state = static_cast<unsigned char>(f.value("state", 0));
}

std::string fabric_api(const FakeDevice* d) {
    return d->nvml.value("fabric", nlohmann::json::object()).value("api", std::string("v3"));
}

}  // namespace

extern "C" {

// Both take void*, as the seam's table declares them (the structure depends on the call and its version).
__attribute__((visibility("default"))) Return nvmlDeviceGetGpuFabricInfo(Device device, void* raw) {
    FAKE_DEVICE_CALL("nvmlDeviceGetGpuFabricInfo")
    auto* info = static_cast<GpuFabricInfoV1*>(raw);
    *info = GpuFabricInfoV1{};
    fill_fabric(d, *info);
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetGpuFabricInfoV(Device device, void* raw) {
    FAKE_DEVICE_CALL("nvmlDeviceGetGpuFabricInfoV")
    const std::string api = fabric_api(d);
    if (api == "v1") return kErrorFunctionNotFound;
    const unsigned version = *static_cast<unsigned*>(raw);
    const auto f = d->nvml.value("fabric", nlohmann::json::object());
    if (version == kGpuFabricInfoV3Version && api == "v3") {
        auto* info = static_cast<GpuFabricInfoV3*>(raw);
        *info = GpuFabricInfoV3{};
        info->version = version;
        fill_fabric(d, *info);
        info->healthMask = f.value("health_mask", 0U);
        info->healthSummary = static_cast<unsigned char>(f.value("health_summary", 0));
        return kSuccess;
    }
    if (version == kGpuFabricInfoV2Version) {
        auto* info = static_cast<GpuFabricInfoV2*>(raw);
        *info = GpuFabricInfoV2{};
        info->version = version;
        fill_fabric(d, *info);
        info->healthMask = f.value("health_mask", 0U);
        return kSuccess;
    }
    return kErrorArgumentVersionMismatch;
}

}  // extern "C"

// ---- The PCIe link, the memory bus, clocks and Grace C2C links ----
//
// A device's "nvml" object may hold (each absent piece: NVML_ERROR_NOT_SUPPORTED, as on a GPU that
// cannot say):
//   "pcie": {"generation": 5, "width": 16, "max_generation": 5, "max_width": 16,
//            "gpu_max_generation": 5, "idle_generation": 1, "replay": 0, "replay_per_copy": 0}
//     current generation: `generation` while the fake driver has a copy under way that touches the
//     device's memory, else `idle_generation` (default `generation`), as a real GPU's link trains down
//     when idle; current width: `width`. max_generation and max_width are the link's (the GPU's and its
//     slot's together; default the current ones), gpu_max_generation the GPU's own (default
//     max_generation). The replay counter is replay + replay_per_copy x the copies of the device that
//     the fake driver has completed in this process. Without "pcie" every PCIe call is NOT_SUPPORTED.
//   "memory_bus_width": bits; "max_memory_clock_mhz", "max_graphics_clock_mhz", "max_sm_clock_mhz",
//     "max_video_clock_mhz": nvmlDeviceGetMaxClockInfo's MEM, GRAPHICS, SM and VIDEO.
//   "c2c": {"links": 10, "max_bw_mbps": 45000, "inactive": [link index...]}: nvmlDeviceGetFieldValues
//     answers NVML_FI_DEV_C2C_LINK_COUNT (the links; 0 without "c2c"), NVML_FI_DEV_C2C_LINK_GET_STATUS
//     (scopeId the link: 1 active, 0 inactive) and NVML_FI_DEV_C2C_LINK_GET_MAX_BW (scopeId the link:
//     max_bw_mbps MB/s for an active link, 0 for an inactive one); NOT_SUPPORTED without "c2c", and for any
//     other field id; a link index past the last: INVALID_ARGUMENT.
//   "nvlink": {"links": 18, "speed_mbps": 26562, "version": 4, "inactive": [link index...],
//     "unknown": [link index...]}: the field values NVML_FI_DEV_NVLINK_LINK_COUNT, _SPEED_MBPS_COMMON,
//     _GET_STATE and _GET_SPEED (scopeId the link; an inactive link's speed 0; an unknown link's state
//     and speed NVML_ERROR_UNKNOWN), nvmlDeviceGetNvLinkState and nvmlDeviceGetNvLinkVersion;
//     NOT_SUPPORTED without "nvlink".
//   "numa_node": N and "cpus": [CPU...]: nvmlDeviceGetMemoryAffinity's node and
//     nvmlDeviceGetCpuAffinityWithinScope's (and nvmlDeviceGetCpuAffinity's) CPUs, whatever the scope;
//     NOT_SUPPORTED without them.
//   "clocks": {"graphics": MHz, "sm": MHz, "memory": MHz} and "clocks_event_reasons": a mask
//     (nvmlClocksEventReasons: 0x4 software power cap, 0x8 hardware slowdown, 0x20 software thermal
//     slowdown, 0x40 hardware thermal slowdown...): nvmlDeviceGetClockInfo and
//     nvmlDeviceGetCurrentClocksEventReasons; NOT_SUPPORTED without them.
// The fake driver's link state (tests/fakecuda/fake_copy.hpp) is found among the objects this process
// has loaded: dl_iterate_phdr names them, dlopen(RTLD_NOLOAD) gives each one's handle without loading
// anything, and the fake driver is the one whose handle has fakecuda_link_state. This works whichever
// paths and RTLD_LOCAL the two were loaded with, needs no variable, and reads every link idle where no
// fake driver is loaded.
namespace {

// nvmlFieldValue_t as the seam declares it: the entry point's type must be the one cumemctl calls it
// through (UBSan's -fsanitize=function checks it).
using FakeFieldValue = cumemctl::nvml::FieldValue;

constexpr unsigned kFieldC2cLinkCount = 170;   // NVML_FI_DEV_C2C_LINK_COUNT
constexpr unsigned kFieldC2cLinkStatus = 171;  // NVML_FI_DEV_C2C_LINK_GET_STATUS
constexpr unsigned kFieldC2cLinkMaxBw = 172;   // NVML_FI_DEV_C2C_LINK_GET_MAX_BW
constexpr int kValueTypeUnsignedInt = 1;       // NVML_VALUE_TYPE_UNSIGNED_INT
constexpr int kClockCount = 4;                 // NVML_CLOCK_GRAPHICS, _SM, _MEM, _VIDEO

using LinkStateFn = int (*)(const char*, int*, unsigned long long*);

int add_object_name(dl_phdr_info* info, size_t, void* names) {
    if (info->dlpi_name != nullptr && *info->dlpi_name != '\0') {
        static_cast<std::vector<std::string>*>(names)->push_back(info->dlpi_name);
    }
    return 0;
}

// Whether the fake driver of this process has a copy under way on the device now, and how many it has
// completed; idle and none where no fake driver is loaded. (The names are gathered first: dlopen is
// not called from inside dl_iterate_phdr, which holds the loader's lock.)
void driver_link_state(const FakeDevice* d, bool& busy, unsigned long long& done) {
    busy = false;
    done = 0;
    std::vector<std::string> names;
    dl_iterate_phdr(add_object_name, &names);
    for (const auto& name : names) {
        void* handle = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
        if (handle == nullptr) continue;
        const auto fn = reinterpret_cast<LinkStateFn>(dlsym(handle, "fakecuda_link_state"));
        int is_busy = 0;
        const bool found = fn != nullptr;
        if (found) fn(d->driver_uuid.c_str(), &is_busy, &done);
        dlclose(handle);
        if (found) {
            busy = is_busy != 0;
            return;
        }
    }
}

// The device's "pcie" object as it is now, or null.
nlohmann::json pcie_of(const FakeDevice* d) {
    const auto j = now(d);
    const auto it = j.find("pcie");
    return it == j.end() || !it->is_object() ? nlohmann::json() : *it;
}

// Answers `key` of the device's "pcie" object, or its fallback key's value; NOT_SUPPORTED where neither
// is there.
Return pcie_value(const FakeDevice* d, const char* key, const char* fallback, unsigned int* out) {
    if (out == nullptr) return kErrorInvalidArgument;
    const auto pcie = pcie_of(d);
    if (pcie.is_null()) return kErrorNotSupported;
    for (const char* k : {key, fallback}) {
        if (k != nullptr && pcie.contains(k)) {
            *out = pcie[k].get<unsigned int>();
            return kSuccess;
        }
    }
    return kErrorNotSupported;
}

// An NVLink field (the topology block below) from the device's "nvml" object as it is now; NOT_SUPPORTED
// for any other field, and for every NVLink field without "nvlink".
void answer_nvlink_field(const nlohmann::json& j, FakeFieldValue& v) {
    const auto it = j.find("nvlink");
    v.nvmlReturn = kErrorNotSupported;
    if (it == j.end() || !it->is_object()) return;
    const unsigned links = it->value("links", 0U);
    const auto inactive = it->value("inactive", std::vector<unsigned>{});
    const bool active = std::find(inactive.begin(), inactive.end(), v.scopeId) == inactive.end();
    switch (v.fieldId) {
        case kFieldNvlinkLinkCount:
            v.value.uiVal = links;
            break;
        case kFieldNvlinkSpeedCommon:
            v.value.uiVal = it->value("speed_mbps", 0U);
            break;
        case kFieldNvlinkGetSpeed:
        case kFieldNvlinkGetState:
            if (v.scopeId >= links) {
                v.nvmlReturn = kErrorInvalidArgument;
                return;
            }
            if (const auto unknown = it->value("unknown", std::vector<unsigned>{});
                std::find(unknown.begin(), unknown.end(), v.scopeId) != unknown.end()) {
                v.nvmlReturn = kErrorUnknown;
                return;
            }
            v.value.uiVal =
                v.fieldId == kFieldNvlinkGetState ? (active ? 1U : 0U) : (active ? it->value("speed_mbps", 0U) : 0U);
            break;
        default:
            return;
    }
    v.nvmlReturn = kSuccess;
}

// One field of nvmlDeviceGetFieldValues.
void answer_field(const FakeDevice* d, FakeFieldValue& v) {
    v.latencyUsec = 0;
    v.timestamp =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    v.valueType = kValueTypeUnsignedInt;
    v.value.ullVal = 0;
    const auto j = now(d);
    const auto c2c = j.find("c2c");
    const bool has_c2c = c2c != j.end() && c2c->is_object();
    const unsigned links = has_c2c ? c2c->value("links", 0U) : 0U;
    switch (v.fieldId) {
        case kFieldC2cLinkCount:
            v.value.uiVal = links;
            v.nvmlReturn = kSuccess;
            return;
        case kFieldC2cLinkStatus:
        case kFieldC2cLinkMaxBw: {
            if (!has_c2c) {
                v.nvmlReturn = kErrorNotSupported;
                return;
            }
            if (v.scopeId >= links) {
                v.nvmlReturn = kErrorInvalidArgument;
                return;
            }
            const auto inactive = c2c->value("inactive", std::vector<unsigned>{});
            const bool active = std::find(inactive.begin(), inactive.end(), v.scopeId) == inactive.end();
            if (v.fieldId == kFieldC2cLinkStatus) {
                v.value.uiVal = active ? 1 : 0;
            } else {
                v.value.uiVal = active ? c2c->value("max_bw_mbps", 0U) : 0;
            }
            v.nvmlReturn = kSuccess;
            return;
        }
        default:
            answer_nvlink_field(j, v);
    }
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) Return nvmlDeviceGetCurrPcieLinkGeneration(Device device,
                                                                                  unsigned int* generation) {
    FAKE_DEVICE_CALL("nvmlDeviceGetCurrPcieLinkGeneration")
    if (generation == nullptr) return kErrorInvalidArgument;
    const auto pcie = pcie_of(d);
    if (pcie.is_null() || !pcie.contains("generation")) return kErrorNotSupported;
    bool busy = false;
    unsigned long long done = 0;
    driver_link_state(d, busy, done);
    *generation = busy ? pcie["generation"].get<unsigned int>()
                       : pcie.value("idle_generation", pcie["generation"].get<unsigned int>());
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetCurrPcieLinkWidth(Device device, unsigned int* width) {
    FAKE_DEVICE_CALL("nvmlDeviceGetCurrPcieLinkWidth")
    return pcie_value(d, "width", nullptr, width);
}

__attribute__((visibility("default"))) Return nvmlDeviceGetMaxPcieLinkGeneration(Device device,
                                                                                 unsigned int* generation) {
    FAKE_DEVICE_CALL("nvmlDeviceGetMaxPcieLinkGeneration")
    return pcie_value(d, "max_generation", "generation", generation);
}

__attribute__((visibility("default"))) Return nvmlDeviceGetMaxPcieLinkWidth(Device device, unsigned int* width) {
    FAKE_DEVICE_CALL("nvmlDeviceGetMaxPcieLinkWidth")
    return pcie_value(d, "max_width", "width", width);
}

__attribute__((visibility("default"))) Return nvmlDeviceGetGpuMaxPcieLinkGeneration(Device device,
                                                                                    unsigned int* generation) {
    FAKE_DEVICE_CALL("nvmlDeviceGetGpuMaxPcieLinkGeneration")
    if (generation == nullptr) return kErrorInvalidArgument;
    const auto pcie = pcie_of(d);
    if (pcie.contains("gpu_max_generation")) return pcie_value(d, "gpu_max_generation", nullptr, generation);
    return pcie_value(d, "max_generation", "generation", generation);
}

__attribute__((visibility("default"))) Return nvmlDeviceGetPcieReplayCounter(Device device, unsigned int* value) {
    FAKE_DEVICE_CALL("nvmlDeviceGetPcieReplayCounter")
    if (value == nullptr) return kErrorInvalidArgument;
    const auto pcie = pcie_of(d);
    if (pcie.is_null()) return kErrorNotSupported;
    bool busy = false;
    unsigned long long done = 0;
    driver_link_state(d, busy, done);
    *value = static_cast<unsigned int>(pcie.value("replay", 0ULL) + pcie.value("replay_per_copy", 0ULL) * done);
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetMemoryBusWidth(Device device, unsigned int* bits) {
    FAKE_DEVICE_CALL("nvmlDeviceGetMemoryBusWidth")
    if (bits == nullptr) return kErrorInvalidArgument;
    const auto j = now(d);
    if (!j.contains("memory_bus_width")) return kErrorNotSupported;
    *bits = j["memory_bus_width"].get<unsigned int>();
    return kSuccess;
}

// type: nvmlClockType_t (0 graphics, 1 SM, 2 memory, 3 video).
__attribute__((visibility("default"))) Return nvmlDeviceGetMaxClockInfo(Device device, int type, unsigned int* mhz) {
    FAKE_DEVICE_CALL("nvmlDeviceGetMaxClockInfo")
    if (mhz == nullptr || type < 0 || type >= kClockCount) return kErrorInvalidArgument;
    static const char* const keys[kClockCount] = {"max_graphics_clock_mhz", "max_sm_clock_mhz", "max_memory_clock_mhz",
                                                  "max_video_clock_mhz"};
    const auto j = now(d);
    if (!j.contains(keys[type])) return kErrorNotSupported;
    *mhz = j[keys[type]].get<unsigned int>();
    return kSuccess;
}

// Each value says its own result; the call fails only for bad arguments (or an injected failure).
__attribute__((visibility("default"))) Return nvmlDeviceGetFieldValues(Device device, int count,
                                                                       FakeFieldValue* values) {
    FAKE_DEVICE_CALL("nvmlDeviceGetFieldValues")
    if (count < 0 || (count > 0 && values == nullptr)) return kErrorInvalidArgument;
    for (int i = 0; i < count; ++i) answer_field(d, values[i]);
    return kSuccess;
}

}  // extern "C"

// ---- Topology: NUMA affinity, NVLink, clocks (the link block's comment above) ----
namespace {

// Sets the bits of `values` in a mask of `words` unsigned longs.
Return fill_mask(const nlohmann::json& values, unsigned words, unsigned long* mask) {
    if (mask == nullptr || words == 0) return kErrorInvalidArgument;
    std::fill(mask, mask + words, 0UL);
    constexpr unsigned kBits = sizeof(unsigned long) * 8;
    for (const auto& v : values) {
        const auto bit = v.get<unsigned>();
        if (bit / kBits >= words) return kErrorInsufficientSize;
        mask[bit / kBits] |= 1UL << (bit % kBits);
    }
    return kSuccess;
}

Return cpu_mask(const FakeDevice* d, unsigned words, unsigned long* set) {
    const auto j = now(d);
    if (!j.contains("cpus") || j["cpus"].is_null()) return kErrorNotSupported;
    return fill_mask(j["cpus"], words, set);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) Return nvmlDeviceGetMemoryAffinity(Device device, unsigned int words,
                                                                          unsigned long* set, int) {
    FAKE_DEVICE_CALL("nvmlDeviceGetMemoryAffinity")
    const auto j = now(d);
    if (!j.contains("numa_node") || j["numa_node"].is_null()) return kErrorNotSupported;
    return fill_mask(nlohmann::json::array({j["numa_node"]}), words, set);
}

__attribute__((visibility("default"))) Return nvmlDeviceGetCpuAffinityWithinScope(Device device, unsigned int words,
                                                                                  unsigned long* set, int) {
    FAKE_DEVICE_CALL("nvmlDeviceGetCpuAffinityWithinScope")
    return cpu_mask(d, words, set);
}

__attribute__((visibility("default"))) Return nvmlDeviceGetCpuAffinity(Device device, unsigned int words,
                                                                       unsigned long* set) {
    FAKE_DEVICE_CALL("nvmlDeviceGetCpuAffinity")
    return cpu_mask(d, words, set);
}

__attribute__((visibility("default"))) Return nvmlDeviceGetNvLinkState(Device device, unsigned int link, int* active) {
    FAKE_DEVICE_CALL("nvmlDeviceGetNvLinkState")
    FakeFieldValue v{};
    v.fieldId = kFieldNvlinkGetState, v.scopeId = link;
    answer_nvlink_field(now(d), v);
    if (v.nvmlReturn == kSuccess && active == nullptr) return kErrorInvalidArgument;
    if (v.nvmlReturn == kSuccess) *active = static_cast<int>(v.value.uiVal);
    return v.nvmlReturn;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetNvLinkVersion(Device device, unsigned int link,
                                                                         unsigned int* version) {
    FAKE_DEVICE_CALL("nvmlDeviceGetNvLinkVersion")
    const auto j = now(d);
    if (!j.contains("nvlink") || version == nullptr)
        return version == nullptr ? kErrorInvalidArgument : kErrorNotSupported;
    if (link >= j["nvlink"].value("links", 0U)) return kErrorInvalidArgument;
    *version = j["nvlink"].value("version", 4U);
    return kSuccess;
}

// type: nvmlClockType_t (0 graphics, 1 SM, 2 memory, 3 video).
__attribute__((visibility("default"))) Return nvmlDeviceGetClockInfo(Device device, int type, unsigned int* mhz) {
    FAKE_DEVICE_CALL("nvmlDeviceGetClockInfo")
    if (mhz == nullptr || type < 0 || type >= kClockCount) return kErrorInvalidArgument;
    static const char* const keys[kClockCount] = {"graphics", "sm", "memory", "video"};
    const auto j = now(d);
    if (!j.contains("clocks") || !j["clocks"].contains(keys[type])) return kErrorNotSupported;
    *mhz = j["clocks"][keys[type]].get<unsigned int>();
    return kSuccess;
}

__attribute__((visibility("default"))) Return nvmlDeviceGetCurrentClocksEventReasons(Device device,
                                                                                     unsigned long long* reasons) {
    FAKE_DEVICE_CALL("nvmlDeviceGetCurrentClocksEventReasons")
    if (reasons == nullptr) return kErrorInvalidArgument;
    const auto j = now(d);
    if (!j.contains("clocks_event_reasons")) return kErrorNotSupported;
    *reasons = j["clocks_event_reasons"].get<unsigned long long>();
    return kSuccess;
}

}  // extern "C"
