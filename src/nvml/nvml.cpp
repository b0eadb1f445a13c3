#include "nvml/nvml.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <utility>

#include <fmt/format.h>

#include "base/setting.hpp"
#include "nvml/watched_api.hpp"
#include "util/phase_timing.hpp"
#include "util/trusted_file.hpp"

namespace cumemctl::nvml {

std::string choose_libnvml(const std::string& explicit_path) {
    if (!explicit_path.empty()) return explicit_path;
    if (const char* env = std::getenv("CUMEMCTL_LIBNVML"); env != nullptr && *env != '\0') return env;
    return kDefaultLibnvml;
}

Library Library::load(const std::string& library, bool watched) {
    const TrustUse use{"the NVML library",
                       fmt::format("give {} (or CUMEMCTL_LIBNVML) a library that only root can change, or "
                                   "neither, for the system's {}",
                                   setting_name(Setting::libnvml), kDefaultLibnvml)};
    Library l;
    l.info_.library = library;
    std::string why;
    l.handle_ = load_library(library, RTLD_NOW | RTLD_LOCAL, use, why);
    if (l.handle_ == nullptr) {
        l.info_.error = fmt::format("cannot load {}: {}", library, why);
        return l;
    }
    std::string missing;
#define CUMEMCTL_NVML_RESOLVE(field, symbol, required, ret, params)           \
    l.api_.field = reinterpret_cast<ret(*) params>(dlsym(l.handle_, symbol)); \
    if ((required) && l.api_.field == nullptr && missing.empty()) missing = symbol;
    CUMEMCTL_NVML_ENTRY_POINTS(CUMEMCTL_NVML_RESOLVE)
#undef CUMEMCTL_NVML_RESOLVE
    if (!missing.empty()) {
        l.info_.error = fmt::format("{} lacks the entry point {}", library, missing);
        l.api_ = Api{};
        return l;
    }
    if (watched) l.api_ = watched_nvml_table(l.api_);
    if (const Return r = l.api_.init(); r != kSuccess) {
        l.info_.error = l.describe("nvmlInit_v2", r);
        return l;
    }
    l.initialised_ = true;
    if (l.api_.system_get_driver_version != nullptr) {
        char version[kDriverVersionBufferSize] = {};
        if (l.api_.system_get_driver_version(version, sizeof version) == kSuccess) l.info_.driver_version = version;
    }
    l.info_.loaded = true;
    // Listed once here, on the loading thread: callers then ask from several threads (doctor's device
    // checks run one thread per device) and only read.
    l.enumerate();
    return l;
}

Library Library::from_table(const Api& api) {
    Library l;
    l.api_ = api;
    l.info_.library = "(table)";
    l.info_.loaded = true;
    l.enumerate();
    return l;
}

Library::Library(Library&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      initialised_(std::exchange(other.initialised_, false)),
      api_(std::exchange(other.api_, Api{})),
      info_(std::move(other.info_)),
      enumerate_error_(std::move(other.enumerate_error_)),
      by_uuid_(std::move(other.by_uuid_)),
      index_by_uuid_(std::move(other.index_by_uuid_)),
      minor_by_uuid_(std::move(other.minor_by_uuid_)) {}

Library& Library::operator=(Library&& other) noexcept {
    if (this != &other) {
        Library gone(std::move(*this));
        handle_ = std::exchange(other.handle_, nullptr);
        initialised_ = std::exchange(other.initialised_, false);
        api_ = std::exchange(other.api_, Api{});
        info_ = std::move(other.info_);
        enumerate_error_ = std::move(other.enumerate_error_);
        by_uuid_ = std::move(other.by_uuid_);
        index_by_uuid_ = std::move(other.index_by_uuid_);
        minor_by_uuid_ = std::move(other.minor_by_uuid_);
    }
    return *this;
}

Library::~Library() {
    if (initialised_ && api_.shutdown != nullptr) api_.shutdown();
    if (handle_ != nullptr) {
        dlclose(handle_);
        mark_phase("NVML shut down and closed");
    }
}

std::string Library::describe(std::string_view call, Return result) const {
    const char* text = api_.error_string != nullptr ? api_.error_string(result) : nullptr;
    return fmt::format("{}: {} ({})", call, text != nullptr ? text : "unknown error", result);
}

void Library::enumerate() {
    unsigned int count = 0;
    if (const Return r = api_.device_get_count(&count); r != kSuccess) {
        enumerate_error_ = describe("nvmlDeviceGetCount_v2", r);
        return;
    }
    for (unsigned int i = 0; i < count; ++i) {
        Device device = nullptr;
        if (const Return r = api_.device_get_handle_by_index(i, &device); r != kSuccess) {
            // A lost or inaccessible GPU: the others are still listed.
            enumerate_error_ = describe("nvmlDeviceGetHandleByIndex_v2", r);
            continue;
        }
        char uuid[kUuidBufferSize] = {};
        if (const Return r = api_.device_get_uuid(device, uuid, sizeof uuid); r != kSuccess) {
            enumerate_error_ = describe("nvmlDeviceGetUUID", r);
            continue;
        }
        by_uuid_.emplace(uuid, device);
        index_by_uuid_.emplace(uuid, i);
        unsigned int minor = 0;
        if (api_.device_get_minor_number != nullptr && api_.device_get_minor_number(device, &minor) == kSuccess) {
            minor_by_uuid_.emplace(uuid, minor);
        }
    }
}

std::vector<std::string> Library::uuids() const {
    std::vector<std::string> out;
    for (const auto& [uuid, device] : by_uuid_) out.push_back(uuid);
    return out;
}

std::optional<unsigned> Library::index_of(const std::string& uuid) const {
    if (const auto it = index_by_uuid_.find(uuid); it != index_by_uuid_.end()) return it->second;
    return std::nullopt;
}

std::optional<unsigned> Library::minor_of(const std::string& uuid) const {
    if (const auto it = minor_by_uuid_.find(uuid); it != minor_by_uuid_.end()) return it->second;
    return std::nullopt;
}

std::optional<Device> Library::device_by_uuid(const std::string& uuid, std::string* why) const {
    if (!loaded()) {
        if (why != nullptr) *why = info_.error;
        return std::nullopt;
    }
    if (const auto it = by_uuid_.find(uuid); it != by_uuid_.end()) return it->second;
    if (why != nullptr) {
        *why = enumerate_error_.empty() ? fmt::format("NVML lists no device with UUID {}", uuid)
                                        : fmt::format("NVML lists no device with UUID {} ({})", uuid, enumerate_error_);
    }
    return std::nullopt;
}

std::optional<Device> find_device(const Library* nvml, const std::string& uuid, std::string& why) {
    if (nvml == nullptr || !nvml->loaded()) {
        why = nvml == nullptr ? "NVML was not loaded" : nvml->info().error;
        return std::nullopt;
    }
    if (uuid.empty()) {
        why = "the driver gives no UUID to find the device in NVML by";
        return std::nullopt;
    }
    return nvml->device_by_uuid(uuid, &why);
}

}  // namespace cumemctl::nvml
