// peer_access.cpp: which devices get access and in what order, the peer check before anything is made
// (a lambda table that refuses one pair), and, through the fake driver behind the real seam, that the
// grant is what lets another device touch the memory: its check fails with CUDA_ERROR_ILLEGAL_ADDRESS
// until it is granted access.
#include <doctest/doctest.h>

#include "cuda/driver_call.hpp"
#include "driver_table.hpp"
#include "fake_driver.hpp"
#include "gpu/device/peer_access.hpp"
#include "gpu/verify/verify.hpp"
#include "gpu/vmm/vmm_resources.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;

TEST_CASE("access_devices puts the device first and drops repeats, keeping the listed order") {
    CHECK(access_devices(1, {}) == std::vector<int>{1});
    CHECK(access_devices(1, {0, 1, 3}) == std::vector<int>{1, 0, 3});
    CHECK(access_devices(2, {3, 0, 3}) == std::vector<int>{2, 3, 0});
}

TEST_CASE("read_write_descs makes one read-write device descriptor per device") {
    const auto descs = read_write_descs({2, 0});
    REQUIRE(descs.size() == 2);
    CHECK(descs[0].location.type == CU_MEM_LOCATION_TYPE_DEVICE);
    CHECK(descs[0].location.id == 2);
    CHECK(descs[1].location.id == 0);
    CHECK(descs[1].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CHECK(std::string(access_flags_name(CU_MEM_ACCESS_FLAGS_PROT_NONE)) == "none");
}

namespace {
// Pairs asked of the table below, as dev * 10 + peer.
std::vector<int>& asked() {
    static std::vector<int> a;
    return a;
}
}  // namespace

TEST_CASE("require_peer_access asks from each other device to the owner and refuses a pair without it") {
    auto api = testing_driver::table();
    api.cuDeviceCanAccessPeer = [](int* can, CUdevice dev, CUdevice peer) {
        asked().push_back(dev * 10 + peer);
        *can = dev == 3 ? 0 : 1;
        return CUDA_SUCCESS;
    };
    asked().clear();
    require_peer_access(api, 1, {1, 0, 2});
    CHECK(asked() == std::vector<int>{1, 21});  // device 0 to 1 and 2 to 1; the owner is not asked
    asked().clear();
    require_peer_access(api, -1, {0, 3});  // host memory: any device, nothing asked
    CHECK(asked().empty());
    try {
        require_peer_access(api, 1, {0, 3});
        FAIL("accepted");
    } catch (const NoPeerAccessError& e) {
        CHECK(e.exit_code() == ExitCode::unavailable);
        CHECK(e.problem().message == "device 3 cannot access the memory of device 1 (cuDeviceCanAccessPeer: 0)");
        CHECK(e.device == 3);
        CHECK(e.owner == 1);
        // The core names the property; a command rebuilds the remedy with its option.
        CHECK(e.problem().remedy == no_peer_access_remedy(3, "the devices given access"));
        CHECK(e.problem().remedy.find("leave device 3 out of the devices given access; ") == 0);
        CHECK(e.problem().remedy.find("--") == std::string::npos);
    }
    CHECK(no_peer_access_remedy(2, "--access").find("leave device 2 out of --access; peer access needs NVLink") == 0);
}

TEST_CASE("another device's check fails with an illegal address until it is granted access, then passes") {
    const DriverApi& api = testing_driver::fake_driver().api();
    testing_driver::use_fake_device(0);
    constexpr std::size_t kSize = 2 << 20;
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    CUmemGenericAllocationHandle h = 0;
    check(api, api.cuMemCreate(&h, kSize, &prop, 0), "cuMemCreate");
    AllocationHandle handle(api, h);
    AddressRange range(api, kSize, kSize);
    Mapping mapping(api, range.base(), kSize, handle.get());
    grant_device_access(api, range.base(), kSize, {0});
    const std::uint64_t seed = 42;
    CHECK(fill_and_check(api, range.base(), kSize, seed).ok());
    CHECK(mapping_access(api, range.base(), 0, {0, 2})[1].flags == CU_MEM_ACCESS_FLAGS_PROT_NONE);
    try {
        check_from_device(api, 2, range.base(), kSize, seed);
        FAIL("device 2 read memory it has no access to");
    } catch (const Error& e) {
        REQUIRE(e.problem().driver);
        CHECK(e.problem().driver->code == CUDA_ERROR_ILLEGAL_ADDRESS);
    }
    // The caller's context is current again after the peer's check, failed or not.
    CUcontext current = nullptr;
    check(api, api.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    CUdevice dev = -1;
    check(api, api.cuCtxGetDevice(&dev), "cuCtxGetDevice");
    CHECK(dev == 0);
    grant_device_access(api, range.base(), kSize, {2});
    CHECK(mapping_access(api, range.base(), 0, {0, 2})[1].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CHECK(check_from_device(api, 2, range.base(), kSize, seed).ok());
    mapping.unmap();
    range.free();
    handle.release();
    api.cuCtxSetCurrent(nullptr);
}
