// The driver seam: the only code that loads libcuda and resolves its entry points.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cuda/driver_api.hpp"
#include "cuda/driver_info.hpp"
#include "base/error.hpp"

namespace cumemctl {

// The library that is loaded when neither --libcuda nor CUMEMCTL_LIBCUDA names one.
inline constexpr const char* kDefaultLibcuda = "libcuda.so.1";

// Picks the library to load: the explicit path if given, else $CUMEMCTL_LIBCUDA, else libcuda.so.1.
std::string choose_libcuda(const std::string& explicit_path);

// The symbol status cumemctl passes in: a value no driver writes (the enum's values are 0 to 2), so that
// a status the driver did not set is told apart from one it did.
inline constexpr auto kProcStatusUnset = static_cast<CUdriverProcAddressQueryResult>(3);

// What cuGetProcAddress answered for one entry point while the driver was loaded: the call's result,
// the symbol status it wrote, and whether a pointer came back. Kept so that a missing optional entry
// point can be explained with the driver's own answer.
struct EntryLookup {
    std::string_view name;
    int version = 0;
    CUresult result = CUDA_SUCCESS;
    CUdriverProcAddressQueryResult status = kProcStatusUnset;
    bool found = false;
};

// "CU_GET_PROC_ADDRESS_SUCCESS", "..._SYMBOL_NOT_FOUND", "..._VERSION_NOT_SUFFICIENT", or "unset" where
// the driver left the status as it was.
std::string proc_status_name(CUdriverProcAddressQueryResult status);

// A loaded (or not loaded) driver library with its resolved entry points. Loading throws only where
// root would load a library that others can change (Error, permission: open_trusted); any
// other driver that cannot be used says why in info().error.
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
    // The load-time lookup of one entry point; nullptr for a driver built from a table (unit tests)
    // or a name that is not in the list.
    const EntryLookup* lookup(std::string_view name) const;

    // Calls cuInit once and returns the device count (0 where the driver says there is no device).
    // Throws Error (unavailable) when the driver is not loaded or cuInit fails otherwise.
    int init();

    // From here on every entry point names itself in the calling thread's PendingSlot while it runs
    // (cuda/watched_api.hpp): for a caller with a time budget (doctor). Once per process.
    void watch_calls();

private:
    Driver() = default;
    void* handle_ = nullptr;
    DriverApi api_{};
    DriverInfo info_{};
    std::vector<EntryLookup> lookups_;
    int device_count_ = -1;
};

}  // namespace cumemctl
