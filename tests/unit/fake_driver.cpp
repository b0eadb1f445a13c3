#include "fake_driver.hpp"

#include <cstdlib>
#include <mutex>

#include "cuda/driver_call.hpp"

namespace testing_driver {

cumemctl::Driver& fake_driver() {
    static cumemctl::Driver* driver = [] {
        setenv("FAKECUDA_PROFILE", FAKECUDA_PROFILES "/gb200x4.json", 1);
        unsetenv("FAKECUDA_INJECT");
        auto* d = new cumemctl::Driver(cumemctl::Driver::load(FAKECUDA_LIBRARY));
        d->init();
        return d;
    }();
    return *driver;
}

void use_fake_device(int ordinal) {
    const auto& api = fake_driver().api();
    static std::mutex mutex;
    static CUcontext contexts[8] = {};
    CUcontext ctx = nullptr;
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (contexts[ordinal] == nullptr) {
            cumemctl::check(api, api.cuDevicePrimaryCtxRetain(&contexts[ordinal], ordinal), "cuDevicePrimaryCtxRetain");
        }
        ctx = contexts[ordinal];
    }
    cumemctl::check(api, api.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
}

std::size_t fake_free_memory() {
    const auto& api = fake_driver().api();
    std::size_t free = 0, total = 0;
    cumemctl::check(api, api.cuMemGetInfo(&free, &total), "cuMemGetInfo");
    return free;
}

}  // namespace testing_driver
