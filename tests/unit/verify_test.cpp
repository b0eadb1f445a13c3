// verify.cpp and verify_module.cpp through the fake driver, loaded by the real seam: the fake runs the
// kernels on the host with the kernels' pattern, so these tests see what was written and found.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cuda/driver_call.hpp"
#include "fake_driver.hpp"
#include "gpu/verify/verify.hpp"
#include "gpu/verify/verify_module.hpp"
#include "gpu/verify/verify_pattern.hpp"
#include "hooked_api.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;
using testing_driver::fake_driver;
using testing_driver::hooks;

namespace {

const DriverApi& api() {
    return fake_driver().api();
}

// cuMemAlloc memory, freed at the end of a test.
struct Linear {
    CUdeviceptr ptr = 0;
    explicit Linear(std::size_t size) { check(api(), api().cuMemAlloc(&ptr, size), "cuMemAlloc"); }
    ~Linear() { api().cuMemFree(ptr); }
};

// Device memory from cuMemCreate, mapped (read-write for the device, unless `access` is false) at
// one or more reserved addresses; everything is unmapped and released at the end of a test.
struct Mapped {
    static constexpr std::size_t kSize = 4 << 20;  // two granules of 2 MiB
    CUmemGenericAllocationHandle handle = 0;
    std::vector<CUdeviceptr> views;
    explicit Mapped(int views_wanted = 1, bool access = true) {
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
        check(api(), api().cuMemCreate(&handle, kSize, &prop, 0), "cuMemCreate");
        for (int i = 0; i < views_wanted; ++i) {
            CUdeviceptr p = 0;
            check(api(), api().cuMemAddressReserve(&p, kSize, 0, 0, 0), "cuMemAddressReserve");
            views.push_back(p);
            check(api(), api().cuMemMap(p, kSize, 0, handle, 0), "cuMemMap");
            const CUmemAccessDesc desc{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
            if (access) check(api(), api().cuMemSetAccess(p, kSize, &desc, 1), "cuMemSetAccess");
        }
    }
    ~Mapped() {
        for (const CUdeviceptr p : views) {
            api().cuMemUnmap(p, kSize);
            api().cuMemAddressFree(p, kSize);
        }
        api().cuMemRelease(handle);
    }
};

// The driver failure code an Error carries, or 0.
int failure_code(const Error& e) {
    return e.problem().driver ? e.problem().driver->code : 0;
}

// Sets FAKECUDA_CORRUPT_AFTER_FILL for one scope.
struct Corruption {
    explicit Corruption(const char* offsets) { setenv("FAKECUDA_CORRUPT_AFTER_FILL", offsets, 1); }
    ~Corruption() { unsetenv("FAKECUDA_CORRUPT_AFTER_FILL"); }
};

}  // namespace

TEST_CASE("fill_and_check writes the offset pattern over every byte, tail included, and finds it") {
    testing_driver::use_fake_device(0);
    const std::size_t size = (1 << 20) + 5;  // 65536 words and 5 tail bytes
    Linear buf(size);
    const VerifyResult r = fill_and_check(api(), buf.ptr, size, 0x5eed);
    CHECK(r.ok());
    CHECK(r.bytes == size);
    CHECK(r.mismatches == 0);
    CHECK(r.fill_seconds > 0);
    CHECK(r.check_seconds > 0);
    CHECK(r.fill_gbps == doctest::Approx(size / r.fill_seconds / 1e9));
    std::vector<unsigned char> host(size);
    check(api(), api().cuMemcpyDtoH(host.data(), buf.ptr, size), "cuMemcpyDtoH");
    for (const std::uint64_t i : {0ULL, 1ULL, 4097ULL, 65535ULL}) {
        const verify::Word w = verify::pattern_word(i, 0x5eed);
        for (unsigned b = 0; b < 16; ++b) CHECK(host[16 * i + b] == verify::pattern_byte(w, b));
    }
    const verify::Word tail = verify::pattern_word(65536, 0x5eed);
    for (unsigned b = 0; b < 5; ++b) CHECK(host[(1 << 20) + b] == verify::pattern_byte(tail, b));
}

TEST_CASE("check_pattern with another seed finds every word, the tail as one") {
    testing_driver::use_fake_device(0);
    const std::size_t size = 4096 + 3;
    Linear buf(size);
    fill_pattern(api(), buf.ptr, size, 1);
    CHECK(check_pattern(api(), buf.ptr, size, 1).ok());
    const VerifyResult r = check_pattern(api(), buf.ptr, size, 2);
    CHECK(r.mismatches == 257);
    CHECK(r.first_mismatch_offset == 0);
    CHECK(r.fill_seconds == 0);
}

TEST_CASE("a corrupted byte is found and its word's offset reported") {
    testing_driver::use_fake_device(0);
    const std::size_t size = 64 * 1024 + 7;
    Linear buf(size);
    {
        Corruption c("40000,4100,4101");  // two words: 4096..4111 and 39984..39999
        const VerifyResult r = fill_and_check(api(), buf.ptr, size, 9);
        CHECK(r.mismatches == 2);
        CHECK(r.first_mismatch_offset == 4096);
        CHECK_FALSE(r.ok());
    }
    {
        Corruption c("65542");  // the last tail byte
        const VerifyResult r = fill_and_check(api(), buf.ptr, size, 9);
        CHECK(r.mismatches == 1);
        CHECK(r.first_mismatch_offset == 65536);
    }
    CHECK(fill_and_check(api(), buf.ptr, size, 9).ok());
}

TEST_CASE("a pattern written through one mapping checks through another: it depends on the offset only") {
    testing_driver::use_fake_device(0);
    Mapped m(2);
    CHECK(fill_and_check(api(), m.views[1], Mapped::kSize, 76).ok());
    const VerifyResult filled = fill_pattern(api(), m.views[0], Mapped::kSize, 77);
    CHECK(filled.mismatches == 0);
    CHECK(filled.check_seconds == 0);
    CHECK(check_pattern(api(), m.views[1], Mapped::kSize, 77).ok());
    CHECK(check_pattern(api(), m.views[1] + 16, Mapped::kSize - 16, 77).mismatches == Mapped::kSize / 16 - 1);
}

TEST_CASE("memory the device cannot access is an illegal address, explained, and nothing leaks") {
    testing_driver::use_fake_device(0);
    const std::size_t before = testing_driver::fake_free_memory();
    SUBCASE("mapped without access") {
        Mapped m(1, false);
        try {
            fill_and_check(api(), m.views[0], Mapped::kSize, 1);
            FAIL("no error");
        } catch (const Error& e) {
            CHECK(failure_code(e) == CUDA_ERROR_ILLEGAL_ADDRESS);
            CHECK(e.problem().cause.find("cannot access") != std::string::npos);
            CHECK(e.problem().remedy.find("cuMemSetAccess") != std::string::npos);
        }
    }
    SUBCASE("reserved, not mapped") {
        CUdeviceptr p = 0;
        check(api(), api().cuMemAddressReserve(&p, Mapped::kSize, 0, 0, 0), "cuMemAddressReserve");
        CHECK_THROWS_WITH_AS(fill_pattern(api(), p, Mapped::kSize, 1), doctest::Contains("CUDA_ERROR_ILLEGAL_ADDRESS"),
                             Error);
        api().cuMemAddressFree(p, Mapped::kSize);
    }
    SUBCASE("past the end of an allocation") {
        Linear buf(4096);
        try {
            check_pattern(api(), buf.ptr, 8192, 1);
            FAIL("no error");
        } catch (const Error& e) {
            CHECK(failure_code(e) == CUDA_ERROR_ILLEGAL_ADDRESS);
        }
    }
    CHECK(testing_driver::fake_free_memory() == before);
}

TEST_CASE("verify refuses an empty or misaligned range and needs a current context") {
    testing_driver::use_fake_device(0);
    Linear buf(4096);
    CHECK_THROWS_WITH_AS(fill_and_check(api(), buf.ptr, 0, 1), "cannot verify an empty range", Error);
    CHECK_THROWS_WITH_AS(fill_and_check(api(), buf.ptr + 8, 64, 1), doctest::Contains("16-byte aligned"), Error);
    check(api(), api().cuCtxSetCurrent(nullptr), "cuCtxSetCurrent");
    CHECK_THROWS_WITH_AS(fill_and_check(api(), buf.ptr, 4096, 1), doctest::Contains("no CUDA context"), Error);
    testing_driver::use_fake_device(0);
}

TEST_CASE("the module is loaded once per context, and unloaded on request") {
    testing_driver::use_fake_device(1);
    hooks() = {};
    const DriverApi hooked = testing_driver::hooked(api());
    unload_verify_kernels(api());  // a test before may have loaded it
    Linear buf(1 << 16);
    for (int i = 0; i < 3; ++i) CHECK(fill_and_check(hooked, buf.ptr, 1 << 16, i).ok());
    CHECK(hooks().ok("cuModuleLoadData") == 1);
    CHECK(hooks().ok("cuModuleGetFunction") == 5);  // fill and check, and memtest's three
    CHECK(hooks().calls["cuLaunchKernel"] == 6);
    unload_verify_kernels(hooked);
    CHECK(hooks().ok("cuModuleUnload") == 1);
    CHECK(fill_and_check(hooked, buf.ptr, 1 << 16, 0).ok());
    CHECK(hooks().ok("cuModuleLoadData") == 2);
}

TEST_CASE("every failing driver call is reported and releases what verify made") {
    testing_driver::use_fake_device(2);
    Linear buf(1 << 16);
    const std::size_t before = testing_driver::fake_free_memory();
    // The call that fails, which of its calls, and whether the module was cached before it failed.
    struct Failure {
        const char* call;
        int nth;
        bool module_kept;
    };
    const Failure failures[] = {
        {"cuCtxGetCurrent", 1, false},     {"cuCtxGetId", 1, false},        {"cuModuleLoadData", 1, false},
        {"cuModuleGetFunction", 2, false}, {"cuCtxGetDevice", 1, false},    {"cuDeviceGetAttribute", 1, false},
        {"cuStreamCreate", 1, true},       {"cuEventCreate", 3, true},      {"cuMemAlloc", 1, true},
        {"cuMemcpyHtoD", 1, true},         {"cuEventRecord", 2, true},      {"cuLaunchKernel", 2, true},
        {"cuEventSynchronize", 1, true},   {"cuEventElapsedTime", 2, true}, {"cuMemcpyDtoH", 1, true},
    };
    for (const Failure& f : failures) {
        CAPTURE(f.call);
        unload_verify_kernels(api());
        hooks() = {};
        hooks().fail_call = f.call;
        hooks().fail_nth = f.nth;
        hooks().fail_result = CUDA_ERROR_LAUNCH_FAILED;
        const DriverApi hooked = testing_driver::hooked(api());
        try {
            fill_and_check(hooked, buf.ptr, 1 << 16, 3);
            FAIL("no error");
        } catch (const Error& e) {
            REQUIRE(e.problem().driver.has_value());
            CHECK(e.problem().driver->call == f.call);
            CHECK(failure_code(e) == CUDA_ERROR_LAUNCH_FAILED);
        }
        const auto& h = hooks();
        CHECK(h.calls.at(f.call) == f.nth);
        CHECK(h.ok("cuStreamCreate") == h.ok("cuStreamDestroy"));
        CHECK(h.ok("cuEventCreate") == h.ok("cuEventDestroy"));
        CHECK(h.ok("cuMemAlloc") == h.ok("cuMemFree"));
        CHECK(h.ok("cuModuleLoadData") - h.ok("cuModuleUnload") == (f.module_kept ? 1 : 0));
        CHECK(testing_driver::fake_free_memory() == before);
    }
    unload_verify_kernels(api());
}

TEST_CASE("a module that does not load says what the fatbin holds and what the device is") {
    testing_driver::use_fake_device(2);
    // No code for the device: a device this build does not cover (unavailable); PTX the driver cannot
    // compile: a driver older than the nvcc.
    const std::pair<CUresult, const char*> failures[] = {
        {CUDA_ERROR_NO_BINARY_FOR_GPU, "compute capability 10.0"},
        {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "upgrade the NVIDIA driver"}};
    for (const auto& failure : failures) {
        const CUresult result = failure.first;
        const char* const remedy = failure.second;
        CAPTURE(result);
        hooks() = {};
        hooks().fail_call = "cuModuleLoadData";
        hooks().fail_result = result;
        unload_verify_kernels(api());
        const DriverApi hooked = testing_driver::hooked(api());
        Linear buf(4096);
        try {
            fill_and_check(hooked, buf.ptr, 4096, 1);
            FAIL("no error");
        } catch (const Error& e) {
            CHECK(e.problem().cause.find("sm_90") != std::string::npos);
            CHECK(e.problem().cause.find("compute capability 10.0") != std::string::npos);
            CHECK(e.problem().remedy.find(remedy) != std::string::npos);
            CHECK(e.exit_code() == (result == CUDA_ERROR_NO_BINARY_FOR_GPU ? ExitCode::unavailable : ExitCode::failed));
        }
    }
    hooks() = {};
}

TEST_CASE("devices verify in parallel, one module per context") {
    fake_driver();
    std::vector<VerifyResult> results(4);
    std::vector<std::string> errors(4);
    std::vector<std::thread> threads;
    for (int d = 0; d < 4; ++d) {
        threads.emplace_back([d, &results, &errors] {
            try {
                testing_driver::use_fake_device(d);
                Linear buf((1 << 20) + 16 * d);
                results[d] = fill_and_check(api(), buf.ptr, (1 << 20) + 16 * d, d);
            } catch (const std::exception& e) {
                errors[d] = e.what();
            }
        });
    }
    for (auto& t : threads) t.join();
    for (int d = 0; d < 4; ++d) {
        CAPTURE(d);
        CHECK(errors[d].empty());
        CHECK(results[d].ok());
        CHECK(results[d].bytes == (1 << 20) + 16 * d);
    }
}

TEST_CASE("the fake driver loads the embedded fatbin and refuses garbage and unknown kernels") {
    testing_driver::use_fake_device(3);
    const auto image = verify_fatbin();
    REQUIRE(image.size() > 1024);
    CUmodule module = nullptr;
    REQUIRE(api().cuModuleLoadData(&module, image.data()) == CUDA_SUCCESS);
    CUfunction f = nullptr;
    CHECK(api().cuModuleGetFunction(&f, module, verify::kCheckKernel) == CUDA_SUCCESS);
    CHECK(api().cuModuleGetFunction(&f, module, "no_such_kernel") == CUDA_ERROR_NOT_FOUND);
    CHECK(api().cuModuleUnload(module) == CUDA_SUCCESS);
    CHECK(api().cuModuleGetFunction(&f, module, verify::kCheckKernel) == CUDA_ERROR_INVALID_HANDLE);
    std::vector<unsigned char> garbage(image.begin(), image.end());
    garbage[0] ^= 0xff;
    CHECK(api().cuModuleLoadData(&module, garbage.data()) == CUDA_ERROR_INVALID_IMAGE);
}
