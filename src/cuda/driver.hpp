// The driver seam: the only code that loads libcuda and resolves its entry points.
#pragma once

#include <string>

#include "cuda/driver_api.hpp"
#include "report/report.hpp"

namespace cumemctl {

// The library that is loaded when neither --libcuda nor CUMEMCTL_LIBCUDA names one.
inline constexpr const char* kDefaultLibcuda = "libcuda.so.1";

// Picks the library to load: the explicit path if given, else $CUMEMCTL_LIBCUDA, else libcuda.so.1.
std::string choose_libcuda(const std::string& explicit_path);

// A loaded (or not loaded) driver library with its resolved entry points. Loading never throws: a
// driver that cannot be used says why in info().error.
class Driver {
public:
    // dlopen()s `library`, finds cuGetProcAddress_v2 with dlsym and resolves the table through it.
    static Driver load(const std::string& library);
    // A driver over an existing table (unit tests): counts as loaded with the given version.
    static Driver from_table(const DriverApi& api, int version);

    Driver(Driver&& other) noexcept;
    Driver& operator=(Driver&& other) noexcept;
    Driver(const Driver&) = delete;
    Driver& operator=(const Driver&) = delete;
    ~Driver();

    bool loaded() const { return info_.loaded; }
    const DriverInfo& info() const { return info_; }
    const DriverApi& api() const { return api_; }
    int version() const { return info_.version; }

    // Calls cuInit once and returns the device count (0 where the driver says there is no device).
    // Throws Error (unavailable) when the driver is not loaded or cuInit fails otherwise.
    int init();

private:
    Driver() = default;
    void* handle_ = nullptr;
    DriverApi api_{};
    DriverInfo info_{};
    int device_count_ = -1;
};

}  // namespace cumemctl
