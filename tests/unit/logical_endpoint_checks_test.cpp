#include <doctest/doctest.h>

#include <map>
#include <string>

#include "running_command.hpp"
#include "units.hpp"

#include "gpu/le/logical_endpoint_checks.hpp"
#include "base/error.hpp"
#include "util/size.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;

using testing_settings::RunningCommand;
using testing_units::GiB;
using testing_units::MiB;

namespace {

const LeLimits kLimits{2 * MiB, 64 * GiB};

// Each setting of a nearest value named by its key in braces, for compact checks.
const std::map<Setting, std::string> kKeys{{Setting::endpoint_size, "{endpoint_size}"},
                                           {Setting::endpoint_offset, "{offset}"},
                                           {Setting::mem_offset, "{mem_offset}"},
                                           {Setting::bind_size, "{bind_size}"}};

// The suggestions of a violation as "{property}=value" strings.
std::vector<std::string> nearest(const std::optional<LeViolation>& v) {
    std::vector<std::string> out;
    REQUIRE(v.has_value());
    for (const auto& s : v->nearest) out.push_back(kKeys.at(s.property) + "=" + size_argument(s.value));
    return out;
}

LeBindPlan plan(std::uint64_t endpoint, std::uint64_t alloc, std::uint64_t offset, std::uint64_t mem_offset,
                std::uint64_t size) {
    return LeBindPlan{endpoint, alloc, offset, mem_offset, size};
}

}  // namespace

TEST_CASE("endpoint size: aligned, non-zero, at most maxSize, with the nearest valid sizes") {
    CHECK_FALSE(check_endpoint_size(4 * MiB, kLimits).has_value());
    CHECK_FALSE(check_endpoint_size(64 * GiB, kLimits).has_value());
    CHECK(nearest(check_endpoint_size(0, kLimits)) == std::vector<std::string>{"{endpoint_size}=2MiB"});
    CHECK(nearest(check_endpoint_size(3 * MiB, kLimits)) ==
          std::vector<std::string>{"{endpoint_size}=2MiB", "{endpoint_size}=4MiB"});
    // Below one alignment only rounding up is valid.
    CHECK(nearest(check_endpoint_size(MiB, kLimits)) == std::vector<std::string>{"{endpoint_size}=2MiB"});
    const auto over = check_endpoint_size(128 * GiB, kLimits);
    CHECK(over->message.find("must shrink") != std::string::npos);
    CHECK(nearest(over) == std::vector<std::string>{"{endpoint_size}=64GiB"});
    // A maxSize that is no multiple of the alignment: the nearest valid size rounds down under it.
    const LeLimits odd{2 * MiB, 5 * MiB};
    CHECK(nearest(check_endpoint_size(6 * MiB, odd)) == std::vector<std::string>{"{endpoint_size}=4MiB"});
    // Misaligned just above the maximum: only the value below stays under it.
    CHECK(nearest(check_endpoint_size(5 * MiB, odd)) == std::vector<std::string>{"{endpoint_size}=4MiB"});
}

TEST_CASE("bind plan: offsets are aligned and inside their ranges") {
    CHECK_FALSE(check_bind_plan(plan(8 * MiB, 8 * MiB, 2 * MiB, 2 * MiB, 4 * MiB), kLimits).has_value());
    const auto off = check_bind_plan(plan(8 * MiB, 8 * MiB, 3 * MiB, 0, 2 * MiB), kLimits);
    CHECK(off->message.find("offset 3 MiB") != std::string::npos);
    CHECK(nearest(off) == std::vector<std::string>{"{offset}=2MiB", "{offset}=4MiB"});
    CHECK(nearest(check_bind_plan(plan(8 * MiB, 8 * MiB, 8 * MiB, 0, 2 * MiB), kLimits)) ==
          std::vector<std::string>{"{offset}=6MiB"});
    CHECK(nearest(check_bind_plan(plan(8 * MiB, 8 * MiB, 0, 1, 2 * MiB), kLimits)) ==
          std::vector<std::string>{"{mem_offset}=0", "{mem_offset}=2MiB"});
    CHECK(nearest(check_bind_plan(plan(8 * MiB, 4 * MiB, 0, 4 * MiB, 2 * MiB), kLimits)) ==
          std::vector<std::string>{"{mem_offset}=2MiB"});
}

TEST_CASE("bind plan: the size is aligned and fits the allocation and the endpoint") {
    CHECK(nearest(check_bind_plan(plan(8 * MiB, 8 * MiB, 0, 0, 0), kLimits)) ==
          std::vector<std::string>{"{bind_size}=8MiB"});
    CHECK(nearest(check_bind_plan(plan(8 * MiB, 8 * MiB, 0, 0, 5 * MiB), kLimits)) ==
          std::vector<std::string>{"{bind_size}=4MiB", "{bind_size}=6MiB"});
    // size + mem offset past the allocation: shrink the size or move the memory offset back.
    const auto mem = check_bind_plan(plan(8 * MiB, 4 * MiB, 0, 2 * MiB, 4 * MiB), kLimits);
    CHECK(mem->message.find("allocation") != std::string::npos);
    CHECK(nearest(mem) == std::vector<std::string>{"{bind_size}=2MiB", "{mem_offset}=0"});
    // size + offset past the endpoint: shrink the size or move the offset back.
    const auto end = check_bind_plan(plan(4 * MiB, 8 * MiB, 2 * MiB, 0, 4 * MiB), kLimits);
    CHECK(end->message.find("endpoint") != std::string::npos);
    CHECK(nearest(end) == std::vector<std::string>{"{bind_size}=2MiB", "{offset}=0"});
    // A size larger than the whole endpoint has no offset that helps.
    CHECK(nearest(check_bind_plan(plan(4 * MiB, 8 * MiB, 0, 0, 6 * MiB), kLimits)) ==
          std::vector<std::string>{"{bind_size}=4MiB"});
}

TEST_CASE("largest_bind fits both ranges") {
    CHECK(largest_bind(8 * MiB, 4 * MiB, 2 * MiB, 0) == 4 * MiB);
    CHECK(largest_bind(8 * MiB, 8 * MiB, 2 * MiB, 4 * MiB) == 4 * MiB);
    CHECK(largest_bind(8 * MiB, 8 * MiB, 8 * MiB, 0) == 0);
}

TEST_CASE("size_argument reads back through parse_size") {
    for (std::uint64_t v : std::vector<std::uint64_t>{0, 2 * MiB, 3 * GiB, 1536 * 1024, 12345}) {
        CAPTURE(v);
        CHECK(parse_size(size_argument(v)) == v);
    }
    CHECK(size_argument(2 * MiB) == "2MiB");
    CHECK(size_argument(1536 * 1024ULL) == "1536KiB");
}

TEST_CASE("refuse is a usage error whose remedy names the nearest values, in the core's words or a command's") {
    const auto off = check_bind_plan(plan(8 * MiB, 8 * MiB, 3 * MiB, 0, 2 * MiB), kLimits);
    const RunningCommand core_words;
    try {
        refuse(*off);
        FAIL("did not throw");
    } catch (const Error& e) {
        CHECK(e.exit_code() == ExitCode::usage);
        CHECK(e.problem().message.find("offset 3 MiB") == 0);
        CHECK(e.problem().remedy == "nearest valid: endpoint offset 2MiB or endpoint offset 4MiB");
    }
    const RunningCommand le_bind(Command::le_bind);
    try {
        refuse(*off);
        FAIL("did not throw");
    } catch (const Error& e) {
        CHECK(e.problem().remedy == "nearest valid: --offset 2MiB or --offset 4MiB");
    }
}

TEST_CASE(
    "nearest_remedy names each setting as the running command spells it, and says something where no value helps") {
    const auto past = check_bind_plan(plan(4 * MiB, 8 * MiB, 2 * MiB, 0, 4 * MiB), kLimits);
    {
        const RunningCommand core_words;
        CHECK(nearest_remedy(*past) == "nearest valid: bind size 2MiB or endpoint offset 0");
    }
    const RunningCommand le_bind(Command::le_bind);
    CHECK(nearest_remedy(*past) == "nearest valid: --bind-size 2MiB or --offset 0");
    CHECK(nearest_remedy(LeViolation{"too big", {}}) == "choose smaller sizes or offsets");
}
