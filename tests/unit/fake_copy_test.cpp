// The fake driver's asynchronous copies and the fake NVML's link calls together (tests/fakecuda/fake_copy.hpp,
// tests/fakenvml/fake_nvml.cpp), as a bandwidth check sees them: the driver's entry points resolved through
// cuGetProcAddress, as the seam resolves every entry point, NVML's with dlsym. The profile is gb200x4's,
// the unit tests' fake driver: 380 GB/s each way between a GPU and host memory.
#include <doctest/doctest.h>
#include <dlfcn.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "fake_driver.hpp"
#include "nvml/nvml_api.hpp"
#include "profile_file.hpp"

namespace fake_copy_test {

// An entry point of the fake driver, through its cuGetProcAddress_v2 (the library is already loaded).
template <class F>
F entry(const char* name) {
    void* lib = dlopen(FAKECUDA_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(lib != nullptr);
    using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
    const auto get = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
    dlclose(lib);
    REQUIRE(reinterpret_cast<void*>(get) != nullptr);
    void* fn = nullptr;
    REQUIRE(get(name, &fn, 12000, 0, nullptr) == CUDA_SUCCESS);
    REQUIRE(fn != nullptr);
    return reinterpret_cast<F>(fn);
}

// What the tests call, with the signatures of cuda.h.
struct Calls {
    CUresult (*mem_alloc)(CUdeviceptr*, size_t) = entry<decltype(mem_alloc)>("cuMemAlloc");
    CUresult (*mem_free)(CUdeviceptr) = entry<decltype(mem_free)>("cuMemFree");
    CUresult (*host_alloc)(void**, size_t, unsigned) = entry<decltype(host_alloc)>("cuMemHostAlloc");
    CUresult (*free_host)(void*) = entry<decltype(free_host)>("cuMemFreeHost");
    CUresult (*htod)(CUdeviceptr, const void*, size_t, CUstream) = entry<decltype(htod)>("cuMemcpyHtoDAsync");
    CUresult (*dtoh)(void*, CUdeviceptr, size_t, CUstream) = entry<decltype(dtoh)>("cuMemcpyDtoHAsync");
    CUresult (*stream_create)(CUstream*, unsigned) = entry<decltype(stream_create)>("cuStreamCreate");
    CUresult (*stream_destroy)(CUstream) = entry<decltype(stream_destroy)>("cuStreamDestroy");
    CUresult (*stream_sync)(CUstream) = entry<decltype(stream_sync)>("cuStreamSynchronize");
    CUresult (*event_create)(CUevent*, unsigned) = entry<decltype(event_create)>("cuEventCreate");
    CUresult (*event_destroy)(CUevent) = entry<decltype(event_destroy)>("cuEventDestroy");
    CUresult (*event_record)(CUevent, CUstream) = entry<decltype(event_record)>("cuEventRecord");
    CUresult (*event_query)(CUevent) = entry<decltype(event_query)>("cuEventQuery");
    CUresult (*event_sync)(CUevent) = entry<decltype(event_sync)>("cuEventSynchronize");
    CUresult (*elapsed)(float*, CUevent, CUevent) = entry<decltype(elapsed)>("cuEventElapsedTime");
};

constexpr size_t kBytes = 16u << 20;
constexpr int kCopies = 10;
constexpr double kH2dBytesPerNs = 380.0;  // gb200x4's copy.h2d_gbps

// The entry points, once the fake driver is loaded and device 0's context is current.
Calls calls_on_device_0() {
    testing_driver::fake_driver();
    testing_driver::use_fake_device(0);
    return Calls{};
}

// Device 0's memory, page-locked host memory, a stream and two events, given back at the end.
struct Rig {
    Calls cu = calls_on_device_0();
    CUdeviceptr device = 0;
    void* host = nullptr;
    CUstream stream = nullptr;
    CUevent start = nullptr, end = nullptr;
    Rig() {
        REQUIRE(cu.mem_alloc(&device, kBytes) == CUDA_SUCCESS);
        REQUIRE(cu.host_alloc(&host, kBytes, 0) == CUDA_SUCCESS);
        REQUIRE(cu.stream_create(&stream, 0) == CUDA_SUCCESS);
        REQUIRE(cu.event_create(&start, 0) == CUDA_SUCCESS);
        REQUIRE(cu.event_create(&end, 0) == CUDA_SUCCESS);
    }
    ~Rig() {
        cu.event_destroy(end);
        cu.event_destroy(start);
        cu.stream_destroy(stream);
        cu.free_host(host);
        cu.mem_free(device);
    }
    Rig(const Rig&) = delete;
    Rig& operator=(const Rig&) = delete;
    // kCopies copies of kBytes to the device between the two events, not waited for.
    void copy_in() {
        REQUIRE(cu.event_record(start, stream) == CUDA_SUCCESS);
        for (int i = 0; i < kCopies; ++i) REQUIRE(cu.htod(device, host, kBytes, stream) == CUDA_SUCCESS);
        REQUIRE(cu.event_record(end, stream) == CUDA_SUCCESS);
    }
};

using FieldValue = cumemctl::nvml::FieldValue;  // nvmlFieldValue_t
// The seam's own types, so that each call's type is the fake's (UBSan checks it).
using Device = cumemctl::nvml::Device;

TEST_CASE("the fake driver's asynchronous copies move the data and take the profile's time on the events") {
    Rig rig;
    std::memset(rig.host, 0x5a, kBytes);
    rig.copy_in();
    REQUIRE(rig.cu.event_sync(rig.end) == CUDA_SUCCESS);
    float ms = 0;
    REQUIRE(rig.cu.elapsed(&ms, rig.start, rig.end) == CUDA_SUCCESS);
    const double modelled_ms = kCopies * static_cast<double>(kBytes) / kH2dBytesPerNs / 1e6;
    CHECK(ms >= modelled_ms * 0.999);  // never faster than the link
    CHECK(ms < modelled_ms + 100);     // and the time is the model's, not the host's copying
    std::vector<unsigned char> back(kBytes);
    REQUIRE(rig.cu.dtoh(back.data(), rig.device, kBytes, rig.stream) == CUDA_SUCCESS);
    REQUIRE(rig.cu.stream_sync(rig.stream) == CUDA_SUCCESS);
    CHECK(back[0] == 0x5a);
    CHECK(back[kBytes - 1] == 0x5a);

    CHECK(rig.cu.htod(rig.device, rig.host, kBytes, reinterpret_cast<CUstream>(0x1234)) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(rig.cu.htod(rig.device + 1, rig.host, kBytes, rig.stream) == CUDA_ERROR_INVALID_VALUE);
    CHECK(rig.cu.dtoh(static_cast<char*>(rig.host) + 1, rig.device, kBytes, rig.stream) == CUDA_ERROR_INVALID_VALUE);
    CHECK(rig.cu.free_host(static_cast<char*>(rig.host) + 1) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("a wait for another stream's event leaves a stream's queued copies behind its start event") {
    // doctor times one GPU's copies while other threads wait for their own events: those waits must not
    // make this stream's copies start when the host, preempted for a while, gets round to them.
    Rig rig;
    rig.copy_in();
    REQUIRE(rig.cu.event_sync(rig.end) == CUDA_SUCCESS);
    CUstream other = nullptr;
    CUevent other_event = nullptr;
    REQUIRE(rig.cu.stream_create(&other, 0) == CUDA_SUCCESS);
    REQUIRE(rig.cu.event_create(&other_event, 0) == CUDA_SUCCESS);
    REQUIRE(rig.cu.event_record(rig.start, rig.stream) == CUDA_SUCCESS);
    REQUIRE(rig.cu.htod(rig.device, rig.host, kBytes, rig.stream) == CUDA_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the first copy's modelled time has passed
    REQUIRE(rig.cu.event_record(other_event, other) == CUDA_SUCCESS);
    REQUIRE(rig.cu.event_sync(other_event) == CUDA_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the host preempted
    for (int i = 1; i < kCopies; ++i) REQUIRE(rig.cu.htod(rig.device, rig.host, kBytes, rig.stream) == CUDA_SUCCESS);
    REQUIRE(rig.cu.event_record(rig.end, rig.stream) == CUDA_SUCCESS);
    REQUIRE(rig.cu.event_sync(rig.end) == CUDA_SUCCESS);
    float ms = 0;
    REQUIRE(rig.cu.elapsed(&ms, rig.start, rig.end) == CUDA_SUCCESS);
    const double modelled_ms = kCopies * static_cast<double>(kBytes) / kH2dBytesPerNs / 1e6;
    CHECK(ms >= modelled_ms * 0.999);
    CHECK(ms < modelled_ms + 50);
    CHECK(rig.cu.event_destroy(other_event) == CUDA_SUCCESS);
    CHECK(rig.cu.stream_destroy(other) == CUDA_SUCCESS);
}

TEST_CASE("the fake NVML's PCIe generation and replay counter follow the fake driver's copies") {
    Rig rig;
    // gb200x4 with a PCIe link on device 0 for NVML, read at nvmlInit_v2.
    nlohmann::json profile = nlohmann::json::parse(std::ifstream(FAKECUDA_PROFILES "/gb200x4.json"));
    profile["devices"][0]["nvml"]["pcie"] = {
        {"generation", 5}, {"width", 16}, {"idle_generation", 1}, {"replay", 2}, {"replay_per_copy", 3}};
    testing_profile::ProfileFile file(profile);
    void* nvml = dlopen(FAKENVML_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(nvml != nullptr);
    const auto init = reinterpret_cast<int (*)()>(dlsym(nvml, "nvmlInit_v2"));
    const auto shutdown = reinterpret_cast<int (*)()>(dlsym(nvml, "nvmlShutdown"));
    const auto count = reinterpret_cast<int (*)(unsigned*)>(dlsym(nvml, "nvmlDeviceGetCount_v2"));
    const auto handle = reinterpret_cast<int (*)(unsigned, Device*)>(dlsym(nvml, "nvmlDeviceGetHandleByIndex_v2"));
    using Unsigned = int (*)(Device, unsigned*);
    const auto generation = reinterpret_cast<Unsigned>(dlsym(nvml, "nvmlDeviceGetCurrPcieLinkGeneration"));
    const auto width = reinterpret_cast<Unsigned>(dlsym(nvml, "nvmlDeviceGetCurrPcieLinkWidth"));
    const auto replay = reinterpret_cast<Unsigned>(dlsym(nvml, "nvmlDeviceGetPcieReplayCounter"));
    const auto fields = reinterpret_cast<int (*)(Device, int, FieldValue*)>(dlsym(nvml, "nvmlDeviceGetFieldValues"));
    REQUIRE(init() == 0);
    unsigned devices = 0;
    REQUIRE(count(&devices) == 0);
    Device first = nullptr;  // the driver's device 0: NVML's last
    Device second = nullptr;
    REQUIRE(handle(devices - 1, &first) == 0);
    REQUIRE(handle(devices - 2, &second) == 0);

    unsigned before = 0, after = 0, g = 0, busy_generation = 0;
    REQUIRE(replay(first, &before) == 0);  // 2 and 3 for each copy device 0 has done in this process
    rig.copy_in();
    REQUIRE(generation(first, &busy_generation) == 0);
    // Where the copies are still under way after the call, they were during it.
    if (rig.cu.event_query(rig.end) == CUDA_ERROR_NOT_READY) CHECK(busy_generation == 5u);
    REQUIRE(rig.cu.event_sync(rig.end) == CUDA_SUCCESS);
    REQUIRE(generation(first, &g) == 0);
    CHECK(g == 1u);
    REQUIRE(replay(first, &after) == 0);
    CHECK(after - before == 3u * kCopies);
    REQUIRE(width(first, &g) == 0);
    CHECK(g == 16u);
    CHECK(generation(second, &g) == 3);  // no "pcie": NVML_ERROR_NOT_SUPPORTED

    FieldValue values[3] = {};
    values[0].fieldId = 170;  // NVML_FI_DEV_C2C_LINK_COUNT
    values[1].fieldId = 171;  // NVML_FI_DEV_C2C_LINK_GET_STATUS
    values[1].scopeId = 9;
    values[2].fieldId = 172;  // NVML_FI_DEV_C2C_LINK_GET_MAX_BW
    values[2].scopeId = 10;   // past the last link
    REQUIRE(fields(first, 3, values) == 0);
    CHECK(values[0].nvmlReturn == 0);
    CHECK(values[0].value.uiVal == 10u);
    CHECK(values[1].value.uiVal == 1u);
    CHECK(values[2].nvmlReturn == 2);
    CHECK(shutdown() == 0);
    dlclose(nvml);
}

}  // namespace fake_copy_test
