// NVML's node and CPU masks, the throttle reasons that slow a GPU, and a thread bound to a node and put
// back (nvml/affinity, nvml/clocks, util/thread_binding).
#include <doctest/doctest.h>

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "nvml/affinity.hpp"
#include "nvml/clocks.hpp"
#include "util/thread_binding.hpp"

using namespace cumemctl;

TEST_CASE("NVML's masks: the set bits, lowest first, across words") {
    const unsigned long mask[3] = {0x5UL, 0UL, 1UL << 3};
    const auto bits = nvml::mask_bits(mask, 3);
    const int word = static_cast<int>(sizeof(unsigned long) * 8);
    CHECK(bits == std::vector<int>{0, 2, 2 * word + 3});
    CHECK(nvml::mask_bits(mask, 0).empty());
}

TEST_CASE("the throttle reasons that slow a GPU are named; idle and settings are not") {
    CHECK(nvml::slowdown_reasons(0).empty());
    CHECK(nvml::slowdown_reasons(0x1 | 0x2 | 0x10 | 0x100).empty());  // idle, clock settings, sync boost, display
    CHECK(nvml::slowdown_reasons(0x4 | 0x20) == std::vector<std::string>{"sw_power_cap", "sw_thermal_slowdown"});
    CHECK(nvml::slowdown_reasons(0x8 | 0x40 | 0x80) ==
          std::vector<std::string>{"hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"});
}

TEST_CASE("a thread bound to CPUs runs there while bound and as before after; a CPU that is not there is refused") {
    cpu_set_t before;
    REQUIRE(sched_getaffinity(0, sizeof before, &before) == 0);
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; ++c) {
        if (CPU_ISSET(c, &before)) first = c;
    }
    REQUIRE(first >= 0);
    {
        const ThreadBinding bound({first}, std::nullopt);
        CHECK(bound.cpus_bound());
        CHECK_FALSE(bound.memory_bound());
        cpu_set_t now;
        REQUIRE(sched_getaffinity(0, sizeof now, &now) == 0);
        CHECK(CPU_COUNT(&now) == 1);
        CHECK(CPU_ISSET(first, &now));
    }
    cpu_set_t after;
    REQUIRE(sched_getaffinity(0, sizeof after, &after) == 0);
    CHECK(CPU_EQUAL(&before, &after));
    {
        const ThreadBinding refused({4095}, std::nullopt);  // no machine here has CPU 4095
        CHECK_FALSE(refused.cpus_bound());
        CHECK(refused.error().find("sched_setaffinity to CPUs 4095") == 0);
    }
    {
        const ThreadBinding node0({}, 0);  // node 0 exists wherever Linux runs
        // ... and qemu-user, which runs the aarch64 unit tests, has no NUMA policy calls: the binding
        // then says so rather than claiming a node.
        int mode = 0;
        const bool policy_calls = syscall(SYS_get_mempolicy, &mode, nullptr, 0UL, nullptr, 0UL) == 0 || errno != ENOSYS;
        if (policy_calls) {
            CHECK(node0.memory_bound());
            CHECK(node0.error().empty());
        } else {
            CHECK_FALSE(node0.memory_bound());
            CHECK(node0.error().find("get_mempolicy: ") == 0);
        }
    }
}
