#include "cuda/driver.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <utility>

#include <fmt/format.h>

#include "base/enum_words.hpp"
#include "base/setting.hpp"
#include "cuda/driver_call.hpp"
#include "cuda/watched_api.hpp"
#include "util/trusted_file.hpp"
#include "util/phase_timing.hpp"

namespace cumemctl {

std::string choose_libcuda(const std::string& explicit_path) {
    if (!explicit_path.empty()) return explicit_path;
    if (const char* env = std::getenv("CUMEMCTL_LIBCUDA"); env != nullptr && *env != '\0') return env;
    return kDefaultLibcuda;
}

Driver Driver::load(const std::string& library) {
    const TrustUse use{"the driver library",
                       fmt::format("give {} (or CUMEMCTL_LIBCUDA) a library that only root can change, or "
                                   "neither, for the system's {}",
                                   setting_name(Setting::libcuda), kDefaultLibcuda)};
    Driver d;
    d.info_.library = library;
    std::string why;
    d.handle_ = load_library(library, RTLD_NOW | RTLD_LOCAL, use, why);
    mark_phase("dlopen libcuda");
    if (d.handle_ == nullptr) {
        d.info_.error = fmt::format("cannot load {}: {}", library, why);
        return d;
    }
    auto get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(d.handle_, "cuGetProcAddress_v2"));
    if (get_proc == nullptr) {
        d.info_.error = fmt::format("{} is not a CUDA 12+ driver: it has no cuGetProcAddress_v2", library);
        return d;
    }
    // The toolkit's stub library answers every lookup with CUDA_ERROR_STUB_LIBRARY.
    {
        void* fn = nullptr;
        if (get_proc("cuInit", &fn, 2000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr) == CUDA_ERROR_STUB_LIBRARY) {
            d.info_.error = fmt::format("{} is the CUDA toolkit's stub library, not a driver", library);
            return d;
        }
    }
    std::string missing;
#define CUMEMCTL_RESOLVE_ENTRY(name, version, required)                                                 \
    {                                                                                                   \
        void* fn = nullptr;                                                                             \
        CUdriverProcAddressQueryResult status = kProcStatusUnset;                                       \
        const CUresult r = get_proc(#name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status);         \
        const bool found = r == CUDA_SUCCESS && status == CU_GET_PROC_ADDRESS_SUCCESS && fn != nullptr; \
        d.lookups_.push_back(EntryLookup{#name, version, r, status, found});                            \
        if (found) {                                                                                    \
            d.api_.name = reinterpret_cast<PFN_##name##_v##version>(fn);                                \
        } else if (required && missing.empty()) {                                                       \
            missing = #name;                                                                            \
        }                                                                                               \
    }
    CUMEMCTL_DRIVER_ENTRY_POINTS(CUMEMCTL_RESOLVE_ENTRY)
#undef CUMEMCTL_RESOLVE_ENTRY
    mark_phase("cuGetProcAddress for every entry point");
    if (!missing.empty()) {
        d.info_.error = fmt::format("{} lacks the entry point {}", library, missing);
        d.api_ = DriverApi{};
        return d;
    }
    int version = 0;
    if (d.api_.cuDriverGetVersion(&version) != CUDA_SUCCESS) {
        d.info_.error = fmt::format("{}: cuDriverGetVersion failed", library);
        d.api_ = DriverApi{};
        return d;
    }
    d.info_.version = version;
    d.info_.loaded = true;
    return d;
}

namespace {

// The driver's answers to cuGetProcAddress, by their own names, and ours for none yet; a newer answer
// reads as its number.
constexpr auto kProcStatusWords = enum_words<CUdriverProcAddressQueryResult>(
    {{CU_GET_PROC_ADDRESS_SUCCESS, "CU_GET_PROC_ADDRESS_SUCCESS"},
     {CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, "CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND"},
     {CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, "CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT"},
     {kProcStatusUnset, "unset"}},
    "?");

}  // namespace

std::string proc_status_name(CUdriverProcAddressQueryResult status) {
    if (const std::optional<std::string_view> word = kProcStatusWords.find(status)) return std::string(*word);
    return fmt::format("CUdriverProcAddressQueryResult {}", static_cast<int>(status));
}

const EntryLookup* Driver::lookup(std::string_view name) const {
    for (const auto& l : lookups_) {
        if (l.name == name) return &l;
    }
    return nullptr;
}

Driver Driver::from_table(const DriverApi& api, int version) {
    Driver d;
    d.api_ = api;
    d.info_.library = "(table)";
    d.info_.loaded = true;
    d.info_.version = version;
    return d;
}

Driver::Driver(Driver&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      api_(other.api_),
      info_(std::move(other.info_)),
      lookups_(std::move(other.lookups_)),
      device_count_(other.device_count_) {}

Driver& Driver::operator=(Driver&& other) noexcept {
    if (this != &other) {
        if (handle_ != nullptr) dlclose(handle_);
        handle_ = std::exchange(other.handle_, nullptr);
        api_ = other.api_;
        info_ = std::move(other.info_);
        lookups_ = std::move(other.lookups_);
        device_count_ = other.device_count_;
    }
    return *this;
}

// The library stays mapped until exit: the driver's own threads may outlive our use of it.
Driver::~Driver() = default;

int Driver::init() {
    if (!info_.loaded) {
        throw Error(ExitCode::unavailable, fmt::format("no usable CUDA driver: {}", info_.error),
                    fmt::format("install the NVIDIA driver, or point {} (or CUMEMCTL_LIBCUDA) at libcuda.so.1",
                                setting_name(Setting::libcuda)));
    }
    if (device_count_ >= 0) return device_count_;
    const CUresult r = api_.cuInit(0);
    mark_phase("cuInit");
    if (r == CUDA_ERROR_NO_DEVICE) {
        device_count_ = 0;
        return 0;
    }
    check(api_, r, "cuInit");
    int count = 0;
    check(api_, api_.cuDeviceGetCount(&count), "cuDeviceGetCount");
    device_count_ = count;
    return count;
}

void Driver::watch_calls() {
    if (info_.loaded) api_ = watched_driver_table(api_);
}

}  // namespace cumemctl
