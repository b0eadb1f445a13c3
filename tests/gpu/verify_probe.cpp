// The GPU tier's check of the verify kernels (run by tests/gpu/test_verify.sh on a machine with a GPU):
// loads the real driver through the seam, allocates SIZE with cuMemAlloc on one device, and prints one
// JSON object with
//   - the fill and check bandwidth of fill_and_check (bytes written, or read, per second; best of
//     --repeat runs) and the bandwidth of cuMemcpyDtoD over the same bytes (half the buffer copied to
//     the other half: bytes read plus written per second, best of --repeat runs);
//   - whether the kernels wrote what verify_pattern.hpp says, bit for bit (the fake driver emulates
//     exactly that pattern), over a range with tail bytes;
//   - whether a byte changed behind the kernels' back (cuMemsetD8) is found at its word's offset.
// Usage: verify_probe [--size BYTES|2GiB] [--device N] [--repeat R] [--libcuda PATH]
// Exit 0 when every check passed (bandwidth is judged by the script), 1 when one failed, 2 on bad
// arguments, 125 when there is no driver or no GPU.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuda/driver.hpp"
#include "cuda/driver_call.hpp"
#include "gpu/verify/verify.hpp"
#include "gpu/verify/verify_pattern.hpp"
#include "util/size.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;
using nlohmann::json;

namespace {

// What the command line asks.
struct Options {
    std::uint64_t size = 1ULL << 30;
    int device = 0;
    int repeat = 5;
    std::string libcuda;
};

Options parse_options(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (i + 1 >= argc) throw Error(ExitCode::usage, "missing value after " + arg);
        const std::string value = argv[++i];
        if (arg == "--size") {
            o.size = parse_size(value);
        } else if (arg == "--device") {
            o.device = std::stoi(value);
        } else if (arg == "--repeat") {
            o.repeat = std::max(1, std::stoi(value));
        } else if (arg == "--libcuda") {
            o.libcuda = value;
        } else {
            throw Error(ExitCode::usage, "unknown option " + arg);
        }
    }
    if (o.size < 4096) throw Error(ExitCode::usage, "--size must be at least 4096 bytes");
    return o;
}

// Best (highest) of a list of rates.
double best(const std::vector<double>& v) {
    return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

// cuMemcpyDtoD of the first half of the buffer onto the second, timed with events on the legacy
// stream: bytes read plus written per second, 10^9.
double copy_gbps(const DriverApi& api, CUdeviceptr ptr, std::uint64_t size) {
    CUevent start = nullptr, stop = nullptr;
    CU_CALL(api, cuEventCreate, &start, CU_EVENT_DEFAULT);
    CU_CALL(api, cuEventCreate, &stop, CU_EVENT_DEFAULT);
    const std::uint64_t half = size / 2 / 16 * 16;
    CU_CALL(api, cuEventRecord, start, nullptr);
    CU_CALL(api, cuMemcpyDtoD, ptr + half, ptr, half);
    CU_CALL(api, cuEventRecord, stop, nullptr);
    CU_CALL(api, cuEventSynchronize, stop);
    float ms = 0;
    CU_CALL(api, cuEventElapsedTime, &ms, start, stop);
    api.cuEventDestroy(start);
    api.cuEventDestroy(stop);
    return 2.0 * static_cast<double>(half) / (ms / 1e3) / 1e9;
}

// Fills a range with a tail (1 MiB + 13 bytes) and compares every byte with the host's pattern.
bool pattern_matches_host(const DriverApi& api, CUdeviceptr ptr, json& out) {
    const std::uint64_t size = (1 << 20) + 13, seed = 0x0123456789abcdefULL;
    fill_pattern(api, ptr, size, seed);
    std::vector<unsigned char> host(size);
    CU_CALL(api, cuMemcpyDtoH, host.data(), ptr, size);
    std::uint64_t wrong = 0, first_wrong = size;
    for (std::uint64_t i = 0; i < size; ++i) {
        if (host[i] != verify::pattern_byte(verify::pattern_word(i / 16, seed), static_cast<unsigned>(i % 16))) {
            ++wrong;
            first_wrong = std::min(first_wrong, i);
        }
    }
    out["pattern_bytes_compared"] = size;
    out["pattern_bytes_wrong"] = wrong;
    if (wrong > 0) out["pattern_first_wrong_byte"] = first_wrong;
    return wrong == 0;
}

// Changes one byte after a fill (cuMemsetD8 to its inverse) and checks that the check finds exactly
// that word.
bool corruption_found(const DriverApi& api, CUdeviceptr ptr, std::uint64_t size, json& out) {
    const std::uint64_t seed = 42, offset = size / 2 + 37;
    fill_pattern(api, ptr, size, seed);
    const unsigned char expected = verify::pattern_byte(verify::pattern_word(offset / 16, seed), offset % 16);
    CU_CALL(api, cuMemsetD8, ptr + offset, static_cast<unsigned char>(~expected), 1);
    CU_CALL(api, cuCtxSynchronize);
    const VerifyResult r = check_pattern(api, ptr, size, seed);
    out["corrupted_offset"] = offset;
    out["corruption_mismatches"] = r.mismatches;
    out["corruption_reported_offset"] = r.first_mismatch_offset;
    return r.mismatches == 1 && r.first_mismatch_offset == offset / 16 * 16;
}

// The bandwidth runs: --repeat fill_and_check and copies; any mismatch fails.
bool measure(const DriverApi& api, CUdeviceptr ptr, const Options& o, json& out) {
    std::vector<double> fill, check, copy;
    std::uint64_t mismatches = 0;
    for (int i = 0; i < o.repeat; ++i) {
        const VerifyResult r = fill_and_check(api, ptr, o.size, 1000 + static_cast<std::uint64_t>(i));
        mismatches += r.mismatches;
        fill.push_back(r.fill_gbps);
        check.push_back(r.check_gbps);
        copy.push_back(copy_gbps(api, ptr, o.size));
    }
    out["mismatches"] = mismatches;
    out["fill_gbps"] = best(fill);
    out["check_gbps"] = best(check);
    out["copy_gbps"] = best(copy);
    out["fill_gbps_runs"] = fill;
    out["check_gbps_runs"] = check;
    out["copy_gbps_runs"] = copy;
    out["fill_to_copy"] = best(fill) / best(copy);
    out["check_to_copy"] = best(check) / best(copy);
    return mismatches == 0;
}

// Everything on one device, its primary context current; the buffer and context are released.
int probe(const DriverApi& api, const Options& o, json& out) {
    CUcontext ctx = nullptr;
    CU_CALL(api, cuDevicePrimaryCtxRetain, &ctx, o.device);
    CU_CALL(api, cuCtxSetCurrent, ctx);
    char name[256] = {};
    api.cuDeviceGetName(name, sizeof name, o.device);
    out["device"] = o.device;
    out["name"] = name;
    out["bytes"] = o.size;
    out["repeat"] = o.repeat;
    CUdeviceptr ptr = 0;
    CU_CALL(api, cuMemAlloc, &ptr, o.size);
    bool ok = false;
    try {
        const bool pattern_ok = pattern_matches_host(api, ptr, out);
        const bool corruption_ok = corruption_found(api, ptr, o.size, out);
        const bool clean = measure(api, ptr, o, out);
        ok = pattern_ok && corruption_ok && clean;
    } catch (...) {
        api.cuMemFree(ptr);
        api.cuDevicePrimaryCtxRelease(o.device);
        throw;
    }
    api.cuMemFree(ptr);
    api.cuDevicePrimaryCtxRelease(o.device);
    out["ok"] = ok;
    return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    json out;
    try {
        const Options o = parse_options(argc, argv);
        Driver driver = Driver::load(choose_libcuda(o.libcuda));
        if (!driver.loaded() || driver.init() == 0) {
            out["skipped"] = driver.loaded() ? "no CUDA device" : driver.info().error;
            std::cout << out.dump() << "\n";
            return 125;
        }
        const int rc = probe(driver.api(), o, out);
        std::cout << out.dump(1) << "\n";
        return rc;
    } catch (const Error& e) {
        out["error"] = e.what();
        out["cause"] = e.problem().cause;
        std::cout << out.dump(1) << "\n";
        return e.exit_code() == ExitCode::usage ? 2 : 1;
    } catch (const std::exception& e) {
        out["error"] = e.what();
        std::cout << out.dump(1) << "\n";
        return 2;
    }
}
