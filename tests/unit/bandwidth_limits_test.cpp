// The limits of memory paths, computed from what the GPU reports (gpu/bandwidth/limits).
#include <doctest/doctest.h>

#include "gpu/bandwidth/limits.hpp"

using namespace cumemctl::gpu;
using cumemctl::nvml::LinkInfo;

TEST_CASE("a PCIe link's limit: rate x lanes x encoding, per direction") {
    CHECK(*pcie_gbps(5, 16) == doctest::Approx(63.015).epsilon(0.001));
    CHECK(*pcie_gbps(4, 16) == doctest::Approx(31.508).epsilon(0.001));
    CHECK(*pcie_gbps(3, 16) == doctest::Approx(15.754).epsilon(0.001));
    CHECK(*pcie_gbps(5, 8) == doctest::Approx(*pcie_gbps(5, 16) / 2));
    CHECK(*pcie_gbps(2, 16) == doctest::Approx(8.0));  // 8b/10b
    CHECK(*pcie_gbps(1, 1) == doctest::Approx(0.25));
    CHECK(*pcie_gbps(6, 16) == doctest::Approx(121.0));  // FLIT, 242/256
    CHECK_FALSE(pcie_gbps(0, 16));
    CHECK_FALSE(pcie_gbps(7, 16));
    CHECK_FALSE(pcie_gbps(5, 0));
}

TEST_CASE("HBM's limit: bus width x clock x 2; the H200's 6016 bits at 3201 MHz") {
    CHECK(*hbm_gbps(6016, 3201) == doctest::Approx(4814.3).epsilon(0.0001));
    CHECK_FALSE(hbm_gbps(0, 3201));
    CHECK_FALSE(hbm_gbps(6016, 0));
}

TEST_CASE("the host link: C2C where NVML names active links, else the PCIe link's maximum, saying which") {
    LinkInfo info;
    std::string why;
    CHECK_FALSE(host_link_limit(info, &why));
    CHECK(why.find("neither") != std::string::npos);

    info.pcie.max_generation = 5, info.pcie.max_width = 16, info.pcie.generation = 1, info.pcie.width = 16;
    auto limit = host_link_limit(info, &why);
    REQUIRE(limit);
    CHECK(limit->link == PathLimit::Link::pcie);
    CHECK(limit->gbps == doctest::Approx(63.015).epsilon(0.001));  // the maximum, never the idle Gen1
    CHECK(limit->basis == "PCIe Gen5 x16 (the link's maximum)");

    // A slot narrower or slower than the GPU by design: the link's maximum is the limit, and it says so.
    info.pcie.max_generation = 4, info.pcie.max_width = 8, info.pcie.gpu_max_generation = 5;
    limit = host_link_limit(info, &why);
    REQUIRE(limit);
    CHECK(limit->gbps == doctest::Approx(15.754).epsilon(0.001));
    CHECK(limit->basis == "PCIe Gen4 x8 (the link's maximum; the GPU itself can do Gen5)");

    info.c2c = cumemctl::nvml::C2cLink{.links = 10, .active_links = 10, .max_mbps = 450000};
    limit = host_link_limit(info, &why);
    REQUIRE(limit);
    CHECK(limit->link == PathLimit::Link::c2c);
    CHECK(limit->gbps == doctest::Approx(450.0));
    CHECK(limit->basis == "C2C, 10 active links");

    // No active C2C link: back to PCIe.
    info.c2c = cumemctl::nvml::C2cLink{.links = 10};
    CHECK(host_link_limit(info, &why)->link == PathLimit::Link::pcie);
}

TEST_CASE("memory's limit: NVML's bus and clock, else the driver's attributes, else unknown") {
    LinkInfo info;
    std::string why;
    auto limit = memory_limit(info, 6016, 3201000, &why);
    REQUIRE(limit);
    CHECK(limit->gbps == doctest::Approx(4814.3).epsilon(0.0001));
    CHECK(limit->basis == "6016-bit bus at 3201 MHz (the driver's attributes)");
    info.memory.width_bits = 5120, info.memory.max_clock_mhz = 2619;
    limit = memory_limit(info, 6016, 3201000, &why);
    REQUIRE(limit);
    CHECK(limit->basis == "5120-bit bus at 2619 MHz (NVML)");
    CHECK_FALSE(memory_limit(LinkInfo{}, 0, 0, &why));
    CHECK(why.find("neither NVML nor the driver") != std::string::npos);
}

TEST_CASE("each figure is held against its path's limit: both directions twice the link, d2d HBM, peer NVLink") {
    DeviceLimits limits;
    limits.host = PathLimit{PathLimit::Link::pcie, 63, "x"};
    limits.memory = PathLimit{PathLimit::Link::hbm, 4814, "y"};
    CopyFigure f;
    f.path = CopyPath::host_to_device;
    CHECK(*limit_of(limits, f) == 63);
    f.path = CopyPath::device_to_host;
    CHECK(*limit_of(limits, f) == 63);
    f.path = CopyPath::both;
    CHECK(*limit_of(limits, f) == 126);
    f.path = CopyPath::device_to_device;
    CHECK(*limit_of(limits, f) == 4814);
    f.path = CopyPath::peer;
    CHECK_FALSE(limit_of(limits, f));  // no NVLink up
    limits.peer = PathLimit{PathLimit::Link::nvlink, 478, "z"};
    CHECK(*limit_of(limits, f) == 478);
    f.bytes = 2'000'000'000, f.seconds = 0.5;
    CHECK(f.gbps() == doctest::Approx(4.0));
    f.seconds = 0;
    CHECK(f.gbps() == 0);
}

TEST_CASE("NVLink's limit: the links up x their speed; none without a link up; how each figure counts") {
    std::string why;
    CHECK_FALSE(nvlink_limit(std::nullopt, &why));
    cumemctl::nvml::NvLink l;
    l.links = 18, l.active = 18, l.active_mbps = 18ULL * 26562;
    auto limit = nvlink_limit(l, &why);
    REQUIRE(limit);
    CHECK(limit->link == PathLimit::Link::nvlink);
    CHECK(limit->gbps == doctest::Approx(478.1).epsilon(0.001));
    CHECK(limit->basis == "NVLink, 18 of 18 links up at 26.6 GB/s (NVML)");
    l.active = 12, l.active_mbps = 12ULL * 26562;  // H100 PCIe by design, or six links down
    CHECK(nvlink_limit(l, &why)->gbps == doctest::Approx(318.7).epsilon(0.001));
    l.active = 0, l.active_mbps = 0;
    CHECK_FALSE(nvlink_limit(l, &why));
    CHECK(why == "none of the GPU's 18 NVLink links is up");

    CHECK(byte_count(CopyPath::host_to_device) == ByteCount::copied);
    CHECK(byte_count(CopyPath::peer) == ByteCount::copied);
    CHECK(byte_count(CopyPath::both) == ByteCount::both_directions);
    CHECK(byte_count(CopyPath::device_to_device) == ByteCount::read_and_written);
    CHECK(std::string(count_name(ByteCount::read_and_written)) == "read_and_written");
}
