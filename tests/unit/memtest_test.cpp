// The memtest core's pure parts: the pattern words and passes, the mismatch bits, the verdict's rules
// and the --record state file. The runs themselves are in tests/cli/cases/memtest.case (fake driver).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gpu/verify/memtest_pattern.hpp"
#include "gpu/memtest/memtest_patterns.hpp"
#include "gpu/memtest/memtest_record.hpp"
#include "gpu/memtest/memtest_run.hpp"
#include "gpu/memtest/memtest_verdict.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu::memtest;

TEST_CASE("memtest pattern words: own address, constants, a walking bit, the verify pattern") {
    const auto a = memtest_word(kAddress, 0, 5, 0x7000'0000'0050ULL);
    CHECK(a.lo == 0x7000'0000'0050ULL);
    CHECK(a.hi == 0x7000'0000'0058ULL);
    const auto ones = memtest_word(kConstant, ~0ULL, 9, 0);
    CHECK((ones.lo == ~0ULL && ones.hi == ~0ULL));
    const auto w = memtest_word(kWalking, 0, 65, 0);  // bit (65 + 0) % 64 = 1
    CHECK(w.lo == 2);
    CHECK(w.hi == ~2ULL);
    const auto swapped = memtest_word(kWalking, 64, 65, 0);  // bit (65 + 64) % 64 = 1, halves exchanged
    CHECK(swapped.lo == ~2ULL);
    CHECK(swapped.hi == 2);
    const auto r = memtest_word(kRandom, 42, 7, 0);
    CHECK(r.lo == cumemctl::gpu::verify::pattern_word(7, 42).lo);
}

TEST_CASE("memtest pattern lists parse names and all, refuse others, and count the bytes each moves") {
    CHECK(parse_pattern_list("all") == default_patterns());
    CHECK(parse_pattern_list("random,address,random") == std::vector<Pattern>{Pattern::random, Pattern::address});
    CHECK_THROWS_AS(parse_pattern_list("address,"), Error);
    CHECK_THROWS_AS(parse_pattern_list("march"), Error);
    CHECK(traffic_per_byte(pattern_passes(Pattern::address, 0)) == 2);
    CHECK(traffic_per_byte(pattern_passes(Pattern::inversions, 0)) == 6);
    CHECK(traffic_per_byte(pattern_passes(Pattern::walking, 0)) == 4);
    CHECK(traffic_per_byte(pattern_passes(Pattern::random, 0)) == 2);
    // The inversions read every word back after each write: the passes end with a check of zeros.
    const auto inv = pattern_passes(Pattern::inversions, 0);
    CHECK(inv.front().op == Pass::Op::fill);
    CHECK(inv.back().op == Pass::Op::check);
}

TEST_CASE("a mismatch's bits number the word's 128 bits, byte 0 first") {
    Mismatch m;
    m.expected_lo = 0, m.actual_lo = 1ULL << 27;
    m.expected_hi = ~0ULL, m.actual_hi = ~0ULL ^ (1ULL << 63);
    CHECK(m.bits() == std::vector<unsigned>{27, 127});
}

TEST_CASE("the memtest verdict: fail on mismatches, uncorrectable errors, remap failures and critical XIDs") {
    RunResult run;
    HealthWatch h;
    h.before.ecc_corrected_volatile = 5, h.after.ecc_corrected_volatile = 5;
    h.before.ecc_uncorrected_volatile = 0, h.after.ecc_uncorrected_volatile = 0;
    h.before.remapped_rows = cumemctl::nvml::RemappedRows{};
    h.after.remapped_rows = cumemctl::nvml::RemappedRows{};
    CHECK(judge(run, &h, 0, "GPU-x").status == CheckStatus::pass);
    CHECK(judge(run, &h, 0, "GPU-x").remedy.empty());

    SUBCASE("corrected errors during the run warn; the ones from before do not") {
        h.after.ecc_corrected_volatile = 7;
        const Verdict v = judge(run, &h, 1, "GPU-x");
        CHECK(v.status == CheckStatus::warn);
        CHECK(v.reasons.front() == "2 corrected ECC errors during the run");
        CHECK(v.remedy.find("GPU 1 (GPU-x): keep it in service") == 0);
    }
    SUBCASE("a pending remap warns; a failure fails, with RMA") {
        h.after.remapped_rows->pending = true;
        CHECK(judge(run, &h, 0, "GPU-x").status == CheckStatus::warn);
        h.after.remapped_rows->failure = true;
        const Verdict v = judge(run, &h, 0, "GPU-x");
        CHECK(v.status == CheckStatus::fail);
        CHECK(v.reasons.front().find("failed during the run") != std::string::npos);
        CHECK(v.remedy.find("RMA") != std::string::npos);
    }
    SUBCASE("an uncorrectable error fails; an XID fails when critical, warns otherwise") {
        h.after.ecc_uncorrected_volatile = 1;
        CHECK(judge(run, &h, 0, "GPU-x").status == CheckStatus::fail);
        h.after.ecc_uncorrected_volatile = 0;
        h.xids = {13};
        CHECK(judge(run, &h, 0, "GPU-x").status == CheckStatus::warn);
        h.xids = {79};
        CHECK(judge(run, &h, 0, "GPU-x").status == CheckStatus::fail);
    }
    SUBCASE("a mismatch fails without NVML too") {
        run.mismatches = 3;
        const Verdict v = judge(run, nullptr, 0, "");
        CHECK(v.status == CheckStatus::fail);
        CHECK(v.reasons == std::vector<std::string>{"3 16-byte words held something other than what was written"});
        CHECK(v.remedy.find("GPU 0: drain it") == 0);
    }
}

TEST_CASE("the memtest state file keeps one entry per GPU, replaced whole, and reads back") {
    const auto dir = std::filesystem::temp_directory_path() / ("cumemctl-memtest-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    const std::string path = (dir / "memtest.json").string();
    std::string why;
    CHECK_FALSE(load_memtest_record(path, "GPU-a", &why).has_value());
    CHECK(why.find("no memtest was recorded") == 0);
    MemtestRecord a{"GPU-a", "n1", "2026-12-01T08:00:00Z", 1.0, "pass", {"fine"}, 100, 200, 0, {"random pass 1"}, 7};
    MemtestRecord b = a;
    b.uuid = "GPU-b", b.status = "fail";
    save_memtest_records(path, {a, b});
    a.status = "warn";
    save_memtest_records(path, {a});
    const auto ra = load_memtest_record(path, "GPU-a", &why), rb = load_memtest_record(path, "GPU-b", &why);
    REQUIRE(ra.has_value());
    REQUIRE(rb.has_value());
    CHECK(ra->status == "warn");
    CHECK(rb->status == "fail");
    CHECK(ra->seed == 7);
    CHECK(describe(*ra) == "last memtest 2026-12-01T08:00:00Z: warn, fine (100 B tested, 50.00% of the free memory)");
    CHECK(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator{}) == 1);
    std::ofstream(path) << "not json";
    CHECK_FALSE(load_memtest_record(path, "GPU-a", &why).has_value());
    CHECK(why.find("is not a memtest state file") != std::string::npos);
    std::filesystem::remove_all(dir);
}
