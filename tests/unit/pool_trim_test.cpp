#include <doctest/doctest.h>

#include "running_command.hpp"
#include "units.hpp"

#include "gpu/pool/pool_trim.hpp"
#include "gpu/pool/pool_workload.hpp"
#include "base/error.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;

using testing_settings::RunningCommand;
using testing_units::GiB;
using testing_units::MiB;

namespace {

// A trim of a 1 GiB pool on a device with 100 GiB free at the start.
TrimFigures figures(std::uint64_t keep, std::uint64_t reserved_after, std::uint64_t free_after) {
    TrimFigures f;
    f.keep = keep;
    f.granule = 2 * MiB;
    f.reserved_before = GiB;
    f.reserved_after = reserved_after;
    f.free_at_start = 100 * GiB;
    f.free_before_trim = 99 * GiB;
    f.free_after_trim = free_after;
    return f;
}
}  // namespace

TEST_CASE("judge_trim passes when the pool gave its memory back, whatever device free memory did") {
    CHECK(judge_trim(figures(0, 0, 100 * GiB)).returned);
    const TrimVerdict v = judge_trim(figures(0, 0, 100 * GiB));
    CHECK(v.reason ==
          "1 GiB came back to the device; the pool holds 0 B after trimming to keep 0 B, within one "
          "granule (2 MiB)");
    // Other processes took (or gave back) device memory meanwhile: no verdict rests on it.
    CHECK(judge_trim(figures(0, 0, 100 * GiB - 488 * MiB)).returned);
    CHECK(judge_trim(figures(0, 0, 90 * GiB)).returned);
    CHECK(judge_trim(figures(0, 0, 101 * GiB)).returned);
}

TEST_CASE("judge_trim fails when the pool keeps more than asked, beyond one granule") {
    CHECK(judge_trim(figures(0, 2 * MiB, 100 * GiB)).returned);
    const TrimVerdict over = judge_trim(figures(0, 4 * MiB, 100 * GiB));
    CHECK_FALSE(over.returned);
    CHECK(over.reason == "the pool still holds 4 MiB after trimming to keep 0 B");
    // Nothing released: the pool still holds everything, even with the device's free memory back.
    const TrimVerdict kept = judge_trim(figures(0, GiB, 100 * GiB));
    CHECK_FALSE(kept.returned);
    CHECK(kept.reason == "the pool still holds 1 GiB after trimming to keep 0 B");
}

TEST_CASE("judge_trim with --keep counts what the pool keeps") {
    const TrimVerdict v = judge_trim(figures(100 * MiB, 96 * MiB, 100 * GiB - 96 * MiB));
    CHECK(v.returned);
    CHECK(v.reason.find("the pool holds 96 MiB after trimming to keep 100 MiB") != std::string::npos);
    CHECK(judge_trim(figures(100 * MiB, 96 * MiB, 99 * GiB)).returned);
    CHECK_FALSE(judge_trim(figures(100 * MiB, 104 * MiB, 100 * GiB)).returned);
}

TEST_CASE(
    "require_keep_within refuses keeping more than is reserved, naming the settings as the running command spells "
    "them") {
    CHECK_NOTHROW(require_keep_within(GiB, GiB));
    try {
        const RunningCommand core_words;
        require_keep_within(2 * GiB, GiB);
        FAIL("accepted");
    } catch (const Error& e) {
        CHECK(e.exit_code() == ExitCode::usage);
        CHECK(e.problem().message ==
              "the size to keep 2 GiB (2147483648 bytes) is more than the pool has reserved: "
              "1 GiB (1073741824 bytes)");
        CHECK(e.problem().remedy == "give the size to keep at most 1 GiB, or a larger exercise workload");
    }
    try {
        const RunningCommand trim_flags(Command::trim);
        require_keep_within(2 * GiB, GiB);
        FAIL("accepted");
    } catch (const Error& e) {
        CHECK(e.problem().message ==
              "--keep 2 GiB (2147483648 bytes) is more than the pool has reserved: 1 GiB (1073741824 bytes)");
        CHECK(e.problem().remedy == "give --keep at most 1 GiB, or a larger --exercise workload");
    }
}

TEST_CASE("threshold_outcome reads what the release threshold implies after synchronising") {
    WorkloadResult w;
    w.after_free.pool.reserved_current = GiB;
    w.after_free.pool.release_threshold = 0;
    w.after_sync.pool.reserved_current = 0;
    ThresholdOutcome o = threshold_outcome(w);
    CHECK_FALSE(o.keeps_all);
    CHECK(o.expected_at_most == 0);
    CHECK(o.holds);
    w.after_sync.pool.reserved_current = 2 * MiB;
    CHECK_FALSE(threshold_outcome(w).holds);
    w.after_free.pool.release_threshold = kKeepEverything;
    w.after_sync.pool.reserved_current = GiB;
    o = threshold_outcome(w);
    CHECK(o.keeps_all);
    CHECK(o.expected_at_most == GiB);
    CHECK(o.holds);
    w.after_free.pool.release_threshold = 256 * MiB;
    w.after_sync.pool.reserved_current = 256 * MiB;
    CHECK(threshold_outcome(w).holds);
    w.after_sync.pool.reserved_current = 258 * MiB;
    CHECK_FALSE(threshold_outcome(w).holds);
}
