#include "nvml/watched_api.hpp"

#include "base/pending.hpp"

namespace cumemctl::nvml {
namespace {

Api real_nvml_table{};

#define CUMEMCTL_NVML_NAME(field, symbol, required, ret, params) constexpr char field##_symbol[] = symbol;
CUMEMCTL_NVML_ENTRY_POINTS(CUMEMCTL_NVML_NAME)
#undef CUMEMCTL_NVML_NAME

}  // namespace

Api watched_nvml_table(const Api& real) {
    real_nvml_table = real;
    Api out = real;
#define CUMEMCTL_NVML_WATCH(field, symbol, required, ret, params) \
    if (real.field != nullptr)                                    \
        out.field = &WatchedCall<&real_nvml_table, ret(*) params>::call<&Api::field, field##_symbol>;
    CUMEMCTL_NVML_ENTRY_POINTS(CUMEMCTL_NVML_WATCH)
#undef CUMEMCTL_NVML_WATCH
    return out;
}

}  // namespace cumemctl::nvml
