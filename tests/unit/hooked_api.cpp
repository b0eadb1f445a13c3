#include "hooked_api.hpp"

#include <type_traits>
#include <utility>

namespace testing_driver {
namespace {

// The table that the hooks forward to.
cumemctl::DriverApi& real_table() {
    static cumemctl::DriverApi table{};
    return table;
}

// The entry point types of DriverApi members, as a function pointer type.
template <auto Member>
using EntryType = std::remove_cvref_t<decltype(std::declval<cumemctl::DriverApi&>().*Member)>;

// A forwarding wrapper for one entry point, generated from its member of DriverApi.
template <auto Member, typename Fn = EntryType<Member>>
struct Hook;

template <auto Member, typename... Args>
struct Hook<Member, CUresult (*)(Args...)> {
    static inline const char* name = "";
    static CUresult call(Args... args) {
        Hooks& h = hooks();
        const int n = ++h.calls[name];
        if (h.fail_call == name && n == h.fail_nth) return h.fail_result;
        const CUresult r = (real_table().*Member)(args...);
        if (r == CUDA_SUCCESS) ++h.successes[name];
        return r;
    }
};

}  // namespace

Hooks& hooks() {
    static Hooks h;
    return h;
}

cumemctl::DriverApi hooked(const cumemctl::DriverApi& real) {
    real_table() = real;
    cumemctl::DriverApi api{};
#define CUMEMCTL_HOOK_ENTRY(entry, version, required)  \
    Hook<& cumemctl::DriverApi::entry>::name = #entry; \
    api.entry = real.entry != nullptr ? &Hook<&cumemctl::DriverApi::entry>::call : nullptr;
    CUMEMCTL_DRIVER_ENTRY_POINTS(CUMEMCTL_HOOK_ENTRY)
#undef CUMEMCTL_HOOK_ENTRY
    return api;
}

}  // namespace testing_driver
