#include "fake_state.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <thread>
#include <chrono>
#include <string_view>

#include "cuda/logical_endpoint_compat.hpp"
#include "device_nodes.hpp"
#include "profile_json.hpp"

namespace fake {
namespace {

// Keeps the devices of `kept` (indices into s.devices), in its order, renumbering each device's "peers".
void keep_devices(State& s, const std::vector<int>& kept) {
    std::vector<Device> visible;
    for (int old : kept) visible.push_back(s.devices[static_cast<std::size_t>(old)]);
    for (auto& d : visible) {
        if (!d.extra.contains("peers")) continue;
        nlohmann::json peers = nlohmann::json::array();
        for (const auto& p : d.extra["peers"]) {
            for (std::size_t n = 0; n < kept.size(); ++n) {
                if (kept[n] == p.get<int>()) peers.push_back(static_cast<int>(n));
            }
        }
        d.extra["peers"] = peers;
    }
    s.devices = std::move(visible);
}

// CUDA_VISIBLE_DEVICES as the driver reads it: a comma list of ordinals or UUIDs ("GPU-" and a unique
// prefix of the hex, dashes allowed); the devices are kept in the list's order and renumbered from 0, and
// the profile's per-device "peers" are renumbered with them. An entry that matches nothing ends the list,
// as the driver does.
std::string uuid_hex_of(std::string text) {
    if (text.rfind("GPU-", 0) == 0) text = text.substr(4);
    std::string hex;
    for (char c : text) {
        if (c != '-') hex += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return hex;
}

void apply_visible_devices(State& s) {
    const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
    if (env == nullptr) return;
    std::vector<int> kept;
    std::string list = env;
    std::size_t start = 0;
    while (start <= list.size()) {
        std::size_t end = list.find(',', start);
        if (end == std::string::npos) end = list.size();
        const std::string item = list.substr(start, end - start);
        start = end + 1;
        int match = -1;
        if (!item.empty() && std::isdigit(static_cast<unsigned char>(item[0]))) {
            const int i = std::atoi(item.c_str());
            if (i >= 0 && i < static_cast<int>(s.devices.size())) match = i;
        } else if (item.rfind("GPU-", 0) == 0) {
            const std::string prefix = uuid_hex_of(item);
            for (std::size_t i = 0; i < s.devices.size(); ++i) {
                if (!prefix.empty() && s.devices[i].uuid_hex.rfind(prefix, 0) == 0) match = static_cast<int>(i);
            }
        }
        if (match < 0) break;
        kept.push_back(match);
    }
    keep_devices(s, kept);
}

struct ResultName {
    CUresult code;
    const char* name;
    const char* text;
};

#define FAKE_RESULT(code, text) \
    { code, #code, text }
const ResultName kResults[] = {
    FAKE_RESULT(CUDA_SUCCESS, "no error"),
    FAKE_RESULT(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
    FAKE_RESULT(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
    FAKE_RESULT(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
    FAKE_RESULT(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
    FAKE_RESULT(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
    FAKE_RESULT(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
    FAKE_RESULT(CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA-capable device(s) is/are busy or unavailable"),
    FAKE_RESULT(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
    FAKE_RESULT(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
    FAKE_RESULT(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
    FAKE_RESULT(CUDA_ERROR_NOT_READY, "device not ready"),
    FAKE_RESULT(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"),
    FAKE_RESULT(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
    FAKE_RESULT(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
    FAKE_RESULT(CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device"),
    FAKE_RESULT(CUDA_ERROR_NOT_PERMITTED, "operation not permitted"),
    FAKE_RESULT(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
    FAKE_RESULT(CUDA_ERROR_SYSTEM_NOT_READY, "system not yet initialized"),
    FAKE_RESULT(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "system has unsupported display driver / cuda driver combination"),
    FAKE_RESULT(CUDA_ERROR_ILLEGAL_STATE, "the operation is not permitted in the current state"),
    FAKE_RESULT(CUDA_ERROR_ALREADY_MAPPED, "resource already mapped"),
    FAKE_RESULT(CUDA_ERROR_NOT_MAPPED, "resource not mapped"),
    FAKE_RESULT(CUDA_ERROR_OPERATING_SYSTEM, "OS call failed or operation not supported on this OS"),
    FAKE_RESULT(CUDA_ERROR_TIMEOUT, "timeout"),
    FAKE_RESULT(CUDA_ERROR_UNKNOWN, "unknown error"),
};
#undef FAKE_RESULT

[[noreturn]] void die(const std::string& why) {
    std::fprintf(stderr, "fakecuda: %s\n", why.c_str());
    std::abort();
}

void add_injections(State& s, const char* env);

// FAKECUDA_COUNT_CALLS="call,call2": at exit, "fakecuda: calls call=N call2=M (pid P)" on stderr, so that a
// test sees what a command did not do (doctor --quick makes no context); "call:value" counts the calls
// that asked for that attribute or location type (count_variant).
void report_call_counts() {
    const char* names = std::getenv("FAKECUDA_COUNT_CALLS");
    if (names == nullptr) return;
    std::string line = "fakecuda: calls";
    std::stringstream ss(names);
    std::string name;
    {
        std::lock_guard<std::mutex> lock(state().mutex);
        while (std::getline(ss, name, ',')) {
            const auto it = state().call_counts.find(name);
            line += " " + name + "=" + std::to_string(it == state().call_counts.end() ? 0 : it->second);
        }
    }
    std::fprintf(stderr, "%s (pid %d)\n", line.c_str(), static_cast<int>(getpid()));
}

// FAKECUDA_CHECK_LEAKS=1, at exit: every kind of thing this process still holds on stderr, and exit 70.
void check_leaks_at_exit() {
    std::vector<std::string> left = pool_leaks();
    for (auto more : {endpoint_leaks(), memory_leaks(), protocol_breaches(), dma_buf_leaks(), pinned_host_leaks()})
        left.insert(left.end(), more.begin(), more.end());
    for (std::size_t i = 0; i < state().devices.size(); ++i) {
        if (state().devices[i].context_refs > 0) {
            left.push_back("device " + std::to_string(i) + "'s primary context retained " +
                           std::to_string(state().devices[i].context_refs) + " times and not released");
        }
    }
    if (left.empty()) return;
    for (const auto& line : left) std::fprintf(stderr, "fakecuda: leak: %s (pid %d)\n", line.c_str(), getpid());
    _exit(70);
}

// The device attributes a profile may name instead of numbering them ("COMPUTE_MODE": 3, or with the
// CU_DEVICE_ATTRIBUTE_ prefix), so that a case says which one it changes: those that cases change,
// and those the tool asks about by name. A name beside the base profile's number overrides it.
#define FAKE_ATTRIBUTE(name) \
    { #name, CU_DEVICE_ATTRIBUTE_##name }
const std::pair<std::string_view, int> kAttributeNames[] = {
    FAKE_ATTRIBUTE(COMPUTE_MODE),
    FAKE_ATTRIBUTE(COMPUTE_CAPABILITY_MAJOR),
    FAKE_ATTRIBUTE(COMPUTE_CAPABILITY_MINOR),
    FAKE_ATTRIBUTE(VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED),
    FAKE_ATTRIBUTE(HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED),
    FAKE_ATTRIBUTE(HANDLE_TYPE_FABRIC_SUPPORTED),
    FAKE_ATTRIBUTE(MEMORY_POOLS_SUPPORTED),
    FAKE_ATTRIBUTE(HOST_NUMA_ID),
    FAKE_ATTRIBUTE(HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED),
    FAKE_ATTRIBUTE(HOST_NUMA_MEMORY_POOLS_SUPPORTED),
    FAKE_ATTRIBUTE(HOST_MEMORY_POOLS_SUPPORTED),
    FAKE_ATTRIBUTE(HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED),
    FAKE_ATTRIBUTE(DMA_BUF_SUPPORTED),
    FAKE_ATTRIBUTE(GPU_DIRECT_RDMA_SUPPORTED),
    FAKE_ATTRIBUTE(GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED),
    FAKE_ATTRIBUTE(GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS),
    FAKE_ATTRIBUTE(GPU_DIRECT_RDMA_WRITES_ORDERING),
    {"LOGICAL_ENDPOINT_UNICAST_SUPPORTED", cumemctl::le::kAttrUnicastSupported},
    {"LOGICAL_ENDPOINT_MULTICAST_SUPPORTED", cumemctl::le::kAttrMulticastSupported},
    {"LOGICAL_ENDPOINT_COUNTED_OPS_SUPPORTED", cumemctl::le::kAttrCountedOpsSupported},
    {"LOGICAL_ENDPOINT_UNICAST_ACCESS_ON_OWNER_SUPPORTED", cumemctl::le::kAttrUnicastAccessOnOwnerSupported},
};
#undef FAKE_ATTRIBUTE

// A profile's attribute key: its number ("20") or its name ("COMPUTE_MODE"); dies naming the names it
// knows when it is neither.
int attribute_number(const std::string& key) {
    if (!key.empty() && std::isdigit(static_cast<unsigned char>(key[0])) != 0) return std::stoi(key);
    const std::string_view name = std::string_view(key).substr(key.rfind("CU_DEVICE_ATTRIBUTE_", 0) == 0 ? 20 : 0);
    std::string known;
    for (const auto& [n, number] : kAttributeNames) {
        if (n == name) return number;
        known += (known.empty() ? "" : ", ") + std::string(n);
    }
    die("profile: no device attribute is called " + key + "; give its number, or one of " + known +
        " (tests/fakecuda/fake_state.cpp: kAttributeNames)");
}

// The device attributes of a profile device: numbers first, then names, which override them.
std::map<int, int> read_attributes(const nlohmann::json& attrs) {
    std::map<int, int> out;
    for (const bool named : {false, true}) {
        for (const auto& [k, v] : attrs.items()) {
            const bool is_name = k.empty() || std::isdigit(static_cast<unsigned char>(k[0])) == 0;
            if (is_name != named) continue;
            // null: the driver does not know the attribute (CUDA_ERROR_INVALID_VALUE), as an older one.
            if (v.is_null()) {
                out.erase(attribute_number(k));
            } else {
                out[attribute_number(k)] = v.get<int>();
            }
        }
    }
    return out;
}

void load_profile(State& s) {
    const char* path = std::getenv("FAKECUDA_PROFILE");
    if (path == nullptr || *path == '\0') die("FAKECUDA_PROFILE is not set");
    try {
        s.profile = read_profile(path);
    } catch (const ProfileMissing& e) {
        die(e.what());
    } catch (const std::exception& e) {
        die(std::string("profile ") + path + ": " + e.what());
    }
    const auto& p = s.profile;
    s.driver_version = p.value("driver_version", 13000);
    if (p.contains("init_error")) s.init_error = result_from_name(p["init_error"].get<std::string>());
    s.missing_entry_points = p.value("missing_entry_points", std::vector<std::string>{});
    const auto profile_devices = p.value("devices", nlohmann::json::array());
    const int profile_count = static_cast<int>(profile_devices.size());
    std::vector<int> openable;  // the devices whose node this process may open (device_nodes.hpp)
    for (int i = 0; i < profile_count; ++i) {
        const auto& d = profile_devices[static_cast<std::size_t>(i)];
        // "cuda_missing": true is a GPU that fell off CUDA's view: NVML (the fake NVML) still lists it.
        if (d.value("cuda_missing", false)) continue;
        if (device_node_allowed(profile_count - 1 - i)) openable.push_back(static_cast<int>(s.devices.size()));
        Device dev;
        dev.name = d.value("name", "Fake GPU");
        dev.uuid_hex = d.value("uuid", "00000000000000000000000000000000");
        dev.pci_bus_id = d.value("pci_bus_id", "00000000:00:00.0");
        dev.total = d.value("total", std::uint64_t{0});
        dev.used = d.value("baseline_used", std::uint64_t{0});
        dev.attrs = read_attributes(d.value("attrs", nlohmann::json::object()));
        for (const auto& g : d.value("granularity", nlohmann::json::array())) {
            GranularityRow row;
            row.loc = g.value("loc", 1);
            row.id = g.value("id", 0);
            row.handle_types = g.value("ht", 0);
            row.flag = g.value("flag", 0);
            row.min = g.value("min", std::uint64_t{0});
            row.rec = g.value("rec", std::uint64_t{0});
            row.result = result_from_name(g.value("r", std::string("CUDA_SUCCESS")));
            dev.granularity.push_back(row);
        }
        dev.extra = d;
        s.devices.push_back(std::move(dev));
    }
    if (openable.size() != s.devices.size()) keep_devices(s, openable);
    apply_visible_devices(s);
    for (const auto& i : p.value("inject", nlohmann::json::array())) {
        s.injections.push_back(Injection{i.at("call").get<std::string>(),
                                         result_from_name(i.at("result").get<std::string>()), i.value("nth", 1),
                                         i.value("count", 1)});
    }
    // FAKECUDA_INJECT="call=RESULT@nth[xcount];call2=..." (RESULT a CUresult name, or HANG: the call never
    // returns) adds injections without a new profile, in
    // every process; FAKECUDA_INJECT_CHILD adds them only in processes started by a process that had
    // loaded the fake (FAKECUDA_LOADED_BY, set here, is inherited): the second process of a command.
    add_injections(s, std::getenv("FAKECUDA_INJECT"));
    const char* loaded_by = std::getenv("FAKECUDA_LOADED_BY");
    if (loaded_by != nullptr && *loaded_by != '\0') add_injections(s, std::getenv("FAKECUDA_INJECT_CHILD"));
    if (const char* d = std::getenv("FAKECUDA_DELAY_MS"); d != nullptr && *d != '\0') {
        std::stringstream ss(d);
        std::string item;
        while (std::getline(ss, item, ';')) {
            const auto colon = item.find(':');
            if (colon == std::string::npos) die("FAKECUDA_DELAY_MS: expected call:ms[;call:ms]: " + item);
            s.delays.emplace_back(item.substr(0, colon), std::stoi(item.substr(colon + 1)));
        }
    }
    if (const char* c = std::getenv("FAKECUDA_SYNC_COPIES"); c != nullptr) s.sync_copies = std::strcmp(c, "1") == 0;
    // FAKECUDA_COST_MS="init:BASE+PER_DEVICE;context:MS;release:MS;lock:PATH" (any part may be left out).
    if (const char* c = std::getenv("FAKECUDA_COST_MS"); c != nullptr && *c != '\0') {
        std::stringstream ss(c);
        std::string item;
        while (std::getline(ss, item, ';')) {
            const auto colon = item.find(':');
            const std::string what = item.substr(0, colon);
            const std::string value = colon == std::string::npos ? "" : item.substr(colon + 1);
            if (what == "init" && value.find('+') != std::string::npos) {
                s.init_base_ms = std::stoi(value.substr(0, value.find('+')));
                s.init_per_device_ms = std::stoi(value.substr(value.find('+') + 1));
            } else if (what == "context" && !value.empty()) {
                s.context_ms = std::stoi(value);
            } else if (what == "release" && !value.empty()) {
                s.release_ms = std::stoi(value);
            } else if (what == "lock" && !value.empty()) {
                s.node_lock = value;
            } else {
                die("FAKECUDA_COST_MS: expected init:BASE+PER_DEVICE;context:MS;release:MS;lock:PATH: " + item);
            }
        }
    }
    if (std::getenv("FAKECUDA_COUNT_CALLS") != nullptr) std::atexit(report_call_counts);
    if (std::getenv("FAKECUDA_LEAK_CHECK") != nullptr) {
        die("FAKECUDA_LEAK_CHECK is gone: set FAKECUDA_CHECK_LEAKS=1, the one leak switch (a process that "
            "exits holding anything says what on stderr and exits 70)");
    }
    const char* leaks = std::getenv("FAKECUDA_CHECK_LEAKS");
    if (leaks != nullptr && std::strcmp(leaks, "1") == 0) std::atexit(check_leaks_at_exit);
    setenv("FAKECUDA_LOADED_BY", std::to_string(getpid()).c_str(), 1);
}

void add_injections(State& s, const char* env) {
    if (env != nullptr && *env != '\0') {
        std::stringstream ss(env);
        std::string item;
        while (std::getline(ss, item, ';')) {
            const auto eq = item.find('=');
            if (eq == std::string::npos) die("FAKECUDA_INJECT: expected call=RESULT[@nth[xcount]]: " + item);
            Injection inj;
            inj.call = item.substr(0, eq);
            std::string rest = item.substr(eq + 1);
            const auto at = rest.find('@');
            if (at != std::string::npos) {
                std::string when = rest.substr(at + 1);
                rest = rest.substr(0, at);
                const auto x = when.find('x');
                inj.nth = std::stoi(when.substr(0, x));
                if (x != std::string::npos) inj.count = std::stoi(when.substr(x + 1));
            }
            inj.result = result_from_name(rest);
            s.injections.push_back(inj);
        }
    }
}

}  // namespace

State& state() {
    static State* s = [] {
        auto* st = new State;  // never destroyed: entry points may run during exit
        try {
            load_profile(*st);
        } catch (const std::exception& e) {
            die(std::string("bad profile: ") + e.what());
        }
        return st;
    }();
    return *s;
}

CUresult result_from_name(const std::string& name) {
    if (name == "HANG") return kHang;
    for (const auto& r : kResults) {
        if (name == r.name) return r.code;
    }
    die("unknown CUresult name " + name);
}

const char* result_name(CUresult r) {
    for (const auto& e : kResults) {
        if (e.code == r) return e.name;
    }
    return nullptr;
}

const char* result_text(CUresult r) {
    for (const auto& e : kResults) {
        if (e.code == r) return e.text;
    }
    return nullptr;
}

void count_variant(const char* call, long value) {
    std::lock_guard<std::mutex> lock(state().mutex);
    ++state().call_counts[std::string(call) + ":" + std::to_string(value)];
}

std::optional<CUresult> injected(const char* call) {
    State& s = state();
    for (const auto& [name, ms] : s.delays) {
        if (name != call) continue;
        std::fprintf(stderr, "fakecuda: delay %s %d ms (pid %d)\n", call, ms, static_cast<int>(getpid()));
        std::fflush(stderr);
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    }
    std::optional<CUresult> result;
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        const int n = ++s.call_counts[call];
        for (const auto& inj : s.injections) {
            if (inj.call != call) continue;
            if (n >= inj.nth && (inj.count == 0 || n < inj.nth + inj.count)) {
                result = inj.result;
                break;
            }
        }
    }
    if (result == kHang) {
        // A call that never returns (a hung GPU): it says so once and sleeps until the process ends.
        std::fprintf(stderr, "fakecuda: hang %s (pid %d)\n", call, static_cast<int>(getpid()));
        std::fflush(stderr);
        while (true) std::this_thread::sleep_for(std::chrono::hours(1));
    }
    return result;
}

void spend(int ms) {
    if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

void spend_serialised(int ms) {
    if (ms <= 0) return;
    static std::mutex in_process;
    const std::lock_guard<std::mutex> lock(in_process);
    const std::string& path = state().node_lock;
    const int fd = path.empty() ? -1 : open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (!path.empty() && fd < 0) die("FAKECUDA_COST_MS: cannot open the lock file " + path);
    if (fd >= 0) {
        while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {
        }
    }
    spend(ms);
    if (fd >= 0) close(fd);  // and with it the lock
}

Device* device(int ordinal) {
    State& s = state();
    if (ordinal < 0 || ordinal >= static_cast<int>(s.devices.size())) return nullptr;
    return &s.devices[static_cast<std::size_t>(ordinal)];
}

bool has_attr(int ordinal, int attribute) {
    const Device* d = device(ordinal);
    if (d == nullptr) return false;
    const auto it = d->attrs.find(attribute);
    return it != d->attrs.end() && it->second != 0;
}

bool imex_channel_available() {
    std::string dir = "/dev/nvidia-caps-imex-channels";
    if (const char* env = std::getenv("FAKECUDA_IMEX_DIR"); env != nullptr && *env != '\0') {
        dir = env;
    } else if (state().profile.contains("imex_channel_dir")) {
        dir = state().profile["imex_channel_dir"].get<std::string>();
    }
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return false;
    bool ok = false;
    // A real channel node is a character device the process may read and write. (Opening it would
    // fail in tests: no driver stands behind a node made in a temporary directory.)
    while (const dirent* e = readdir(d)) {
        if (std::string(e->d_name).rfind("channel", 0) != 0) continue;
        struct stat st {};
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISCHR(st.st_mode)) continue;
        if (faccessat(dirfd(d), e->d_name, R_OK | W_OK, AT_EACCESS) == 0) {
            ok = true;
            break;
        }
    }
    closedir(d);
    return ok;
}

}  // namespace fake
