// The fake driver's modules and kernels. cuModuleLoadData accepts a fatbin (checked by its header:
// magic 0xBA55ED50, version 1, 16-byte header) and refuses anything else with
// CUDA_ERROR_INVALID_IMAGE, and one that holds nothing the current device can run (no machine code for
// its compute capability, no PTX it can compile) with CUDA_ERROR_NO_BINARY_FOR_GPU; a module offers the verify kernels
// by name; cuLaunchKernel runs them at once on the host over the (host-addressed) device memory, with the pattern of
// src/gpu/verify/verify_pattern.hpp, so that the memory holds what the CUDA kernels would write, bit for bit. A range
// that is not mapped and accessible to the device of the current context fails the launch with
// CUDA_ERROR_ILLEGAL_ADDRESS (the real driver reports it at the next synchronisation). Also cuCtxGetId and
// cuCtxGetDevice, which the verify module cache needs.
//
// FAKECUDA_CORRUPT_AFTER_FILL=OFFSET[,OFFSET...] (read at every launch): after each fill kernel, the
// byte at each OFFSET from the start of the filled range that lies in it is inverted. The memtest
// kernels run in fake_memtest.cpp, with its fault model.
#include <algorithm>
#include <chrono>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fake_copy.hpp"
#include "fake_context.hpp"
#include "fake_locality.hpp"
#include "fake_memory.hpp"
#include "fake_memtest.hpp"
#include "gpu/verify/verify_pattern.hpp"

namespace {

namespace pattern = cumemctl::gpu::verify;

// The kernels a fake module holds.
enum class Kernel { fill, check, memtest_fill, memtest_check, memtest_check_write };

// A function handle's kernel and the module it came from.
struct Function {
    CUmodule module;
    Kernel kernel;
};

// Loaded modules and the functions taken from them; handles are small integers as pointers.
std::map<CUmodule, bool>& modules() {
    static auto* m = new std::map<CUmodule, bool>;
    return *m;
}
std::map<CUfunction, Function>& functions() {
    static auto* f = new std::map<CUfunction, Function>;
    return *f;
}
std::uintptr_t next_module = 0x7000;
std::uintptr_t next_function = 0x7800;

// The fatbin header's fields, as nvcc writes them.
constexpr std::uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr std::uint16_t kFatbinVersion = 1;
constexpr std::uint16_t kFatbinHeaderSize = 16;

bool is_fatbin(const void* image) {
    std::uint32_t magic = 0;
    std::uint16_t version = 0, header_size = 0;
    const auto* bytes = static_cast<const unsigned char*>(image);
    std::memcpy(&magic, bytes, 4);
    std::memcpy(&version, bytes + 4, 2);
    std::memcpy(&header_size, bytes + 6, 2);
    return magic == kFatbinMagic && version == kFatbinVersion && header_size == kFatbinHeaderSize;
}

// What a fatbin holds for a device of compute capability major.minor, as the driver decides it: machine
// code (an ELF entry) for sm_XY runs on X.Y and later minors of X; PTX for compute_XY is compiled for any
// X.Y or later. Entries follow the header, each with its kind (1 PTX, 2 ELF) at 0, its header size at 4,
// its payload size at 8 and its architecture (10 * major + minor) at 28.
bool fatbin_runs_on(const void* image, int major, int minor) {
    const auto* bytes = static_cast<const unsigned char*>(image);
    std::uint64_t fat_size = 0;
    std::memcpy(&fat_size, bytes + 8, 8);
    const int device = 10 * major + minor;
    std::uint64_t offset = kFatbinHeaderSize;
    while (offset + 32 <= kFatbinHeaderSize + fat_size) {
        std::uint16_t kind = 0;
        std::uint32_t header_size = 0, arch = 0;
        std::uint64_t size = 0;
        std::memcpy(&kind, bytes + offset, 2);
        std::memcpy(&header_size, bytes + offset + 4, 4);
        std::memcpy(&size, bytes + offset + 8, 8);
        std::memcpy(&arch, bytes + offset + 28, 4);
        const int a = static_cast<int>(arch);
        if (kind == 2 && a / 10 == major && a % 10 <= minor) return true;
        if (kind == 1 && a <= device) return true;
        if (header_size == 0) break;
        offset += header_size + size;
    }
    return false;
}

// The offsets that FAKECUDA_CORRUPT_AFTER_FILL names.
std::vector<std::uint64_t> corrupt_offsets() {
    std::vector<std::uint64_t> offsets;
    const char* env = std::getenv("FAKECUDA_CORRUPT_AFTER_FILL");
    if (env == nullptr) return offsets;
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (!item.empty()) offsets.push_back(std::stoull(item, nullptr, 0));
    }
    return offsets;
}

// The 16 bytes of pattern word `i` as the kernels store them (lo first, little-endian, as on this host).
static_assert(std::endian::native == std::endian::little);
void pattern_bytes(std::uint64_t i, std::uint64_t seed, unsigned char out[16]) {
    const pattern::Word w = pattern::pattern_word(i, seed);
    std::memcpy(out, &w.lo, 8);
    std::memcpy(out + 8, &w.hi, 8);
}

// What cumemctl_verify_fill does.
void run_fill(const pattern::KernelArgs& a) {
    auto* bytes = reinterpret_cast<unsigned char*>(a.base);
    unsigned char word[16];
    for (std::uint64_t i = 0; i < a.words; ++i) {
        pattern_bytes(i, a.seed, word);
        std::memcpy(bytes + 16 * i, word, 16);
    }
    pattern_bytes(a.words, a.seed, word);
    std::memcpy(bytes + 16 * a.words, word, a.tail_bytes);
    for (const std::uint64_t offset : corrupt_offsets()) {
        if (offset < 16 * a.words + a.tail_bytes) bytes[offset] = static_cast<unsigned char>(~bytes[offset]);
    }
}

// What cumemctl_verify_check does: counts mismatching words (the tail as one) and lowers the first index.
void run_check(const pattern::KernelArgs& a) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(a.base);
    std::uint64_t count = 0, first = ~0ULL;
    unsigned char word[16];
    for (std::uint64_t i = 0; i <= a.words; ++i) {
        const std::size_t length = i < a.words ? 16 : a.tail_bytes;
        if (length == 0) continue;
        pattern_bytes(i, a.seed, word);
        if (std::memcmp(bytes + 16 * i, word, length) != 0) {
            ++count;
            first = std::min(first, i);
        }
    }
    auto* counters = reinterpret_cast<pattern::Counters*>(a.counters);
    counters->mismatches += count;
    counters->first_index = std::min<unsigned long long>(counters->first_index, first);
}

// Checks the launch shape and the memory the kernel touches; caller holds the state mutex.
CUresult validate_launch(const Function& f, unsigned grid, unsigned block, const pattern::KernelArgs& a, int device) {
    if (grid == 0 || block == 0 || block > 1024) return CUDA_ERROR_INVALID_VALUE;
    if (a.tail_bytes > 15) return CUDA_ERROR_INVALID_VALUE;
    if (a.base % 16 != 0) return CUDA_ERROR_MISALIGNED_ADDRESS;
    if (!fake::valid_device_range(a.base, 16 * a.words + a.tail_bytes, device)) return CUDA_ERROR_ILLEGAL_ADDRESS;
    if (f.kernel == Kernel::check && !fake::valid_device_range(a.counters, sizeof(pattern::Counters), device)) {
        return CUDA_ERROR_ILLEGAL_ADDRESS;
    }
    return CUDA_SUCCESS;
}

// Checks and runs a memtest kernel (fake_memtest.cpp); caller holds the state mutex.
CUresult launch_memtest(Kernel kernel, unsigned grid, unsigned block, const cumemctl::gpu::memtest::KernelArgs& a) {
    namespace mt = cumemctl::gpu::memtest;
    const int device = fake::current_context_device();
    if (grid == 0 || block == 0 || block > 1024) return CUDA_ERROR_INVALID_VALUE;
    if (a.base % 16 != 0) return CUDA_ERROR_MISALIGNED_ADDRESS;
    if (!fake::valid_device_range(a.base, 16 * a.words, device)) return CUDA_ERROR_ILLEGAL_ADDRESS;
    if (a.words == 0) return CUDA_SUCCESS;  // a launch over no word touches nothing (the log included)
    if (kernel != Kernel::memtest_fill) {
        if (!fake::valid_device_range(a.log, 16, device)) return CUDA_ERROR_ILLEGAL_ADDRESS;
        const auto* log = reinterpret_cast<const mt::MismatchLog*>(a.log);
        if (!fake::valid_device_range(a.log, mt::mismatch_log_bytes(log->capacity), device)) {
            return CUDA_ERROR_ILLEGAL_ADDRESS;
        }
    }
    const fake::MemtestOp op = kernel == Kernel::memtest_fill    ? fake::MemtestOp::fill
                               : kernel == Kernel::memtest_check ? fake::MemtestOp::check
                                                                 : fake::MemtestOp::check_write;
    fake::run_memtest(op, a);
    return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult cuModuleLoadData(CUmodule* module, const void* image) {
    FAKE_ENTRY_INIT("cuModuleLoadData");
    if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (fake::current_context_device() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (!is_fatbin(image)) return CUDA_ERROR_INVALID_IMAGE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const auto& attrs = fake::state().devices[fake::current_context_device()].attrs;
    const auto major = attrs.find(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    const auto minor = attrs.find(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    if (major != attrs.end() && minor != attrs.end() && !fatbin_runs_on(image, major->second, minor->second)) {
        return CUDA_ERROR_NO_BINARY_FOR_GPU;
    }
    *module = reinterpret_cast<CUmodule>(next_module++);
    modules()[*module] = true;
    return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
    FAKE_ENTRY_INIT("cuModuleGetFunction");
    if (function == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (modules().count(module) == 0) return CUDA_ERROR_INVALID_HANDLE;
    Kernel kernel;
    if (std::strcmp(name, pattern::kFillKernel) == 0) {
        kernel = Kernel::fill;
    } else if (std::strcmp(name, pattern::kCheckKernel) == 0) {
        kernel = Kernel::check;
    } else if (std::strcmp(name, cumemctl::gpu::memtest::kFillKernel) == 0) {
        kernel = Kernel::memtest_fill;
    } else if (std::strcmp(name, cumemctl::gpu::memtest::kCheckKernel) == 0) {
        kernel = Kernel::memtest_check;
    } else if (std::strcmp(name, cumemctl::gpu::memtest::kCheckWriteKernel) == 0) {
        kernel = Kernel::memtest_check_write;
    } else {
        return CUDA_ERROR_NOT_FOUND;
    }
    *function = reinterpret_cast<CUfunction>(next_function++);
    functions()[*function] = Function{module, kernel};
    return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule module) {
    FAKE_ENTRY_INIT("cuModuleUnload");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (modules().erase(module) == 0) return CUDA_ERROR_INVALID_HANDLE;
    std::erase_if(functions(), [module](const auto& entry) { return entry.second.module == module; });
    return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                        unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                        unsigned int sharedMemBytes, CUstream hStream, void** kernelParams, void** extra) {
    FAKE_ENTRY_INIT("cuLaunchKernel");
    (void)sharedMemBytes;
    if (fake::current_context_device() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    // A kernel runs here, on the host, as it is launched: the stream's work is where the host is, so
    // an event recorded after it reads the host's clock (fake_copy.hpp, stream_mark).
    fake::stream_waited(hStream);
    if (kernelParams == nullptr || kernelParams[0] == nullptr || extra != nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const auto it = functions().find(f);
    if (it == functions().end()) return CUDA_ERROR_INVALID_HANDLE;
    fake::count_launch();
    if (it->second.kernel != Kernel::fill && it->second.kernel != Kernel::check) {
        return launch_memtest(it->second.kernel, gridDimX * gridDimY * gridDimZ, blockDimX * blockDimY * blockDimZ,
                              *static_cast<const cumemctl::gpu::memtest::KernelArgs*>(kernelParams[0]));
    }
    const auto& args = *static_cast<const pattern::KernelArgs*>(kernelParams[0]);
    const CUresult r = validate_launch(it->second, gridDimX * gridDimY * gridDimZ, blockDimX * blockDimY * blockDimZ,
                                       args, fake::current_context_device());
    if (r != CUDA_SUCCESS) return r;
    if (it->second.kernel == Kernel::fill) {
        run_fill(args);
    } else {
        const auto start = std::chrono::steady_clock::now();
        run_check(args);
        const auto spent = std::chrono::steady_clock::now() - start;
        fake::charge_read(static_cast<std::uintptr_t>(args.base), args.words * 16 + args.tail_bytes,
                          std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count());
    }
    return CUDA_SUCCESS;
}

CUresult cuCtxGetId(CUcontext ctx, unsigned long long* id) {
    FAKE_ENTRY_INIT("cuCtxGetId");
    if (id == nullptr) return CUDA_ERROR_INVALID_VALUE;
    // A fake context is its device's ordinal plus one (fake_context.cpp) and is never made again; a green
    // context's (fake_locality.cpp) has its domain above bit 16, and an id of its own.
    const auto value = reinterpret_cast<std::intptr_t>(ctx != nullptr ? ctx : fake::current_context_handle());
    const auto ordinal = (value & 0xffff) - 1;
    const auto green = value >> 16;
    if (ordinal < 0 || fake::device(static_cast<int>(ordinal)) == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    *id = static_cast<unsigned long long>(ordinal) + 1 + static_cast<unsigned long long>(green) * 1000;
    return CUDA_SUCCESS;
}

// The CUDA 2.0 form (one argument); the fake defines no cuCtxGetDevice_v2, so this is what it resolves.
CUresult cuCtxGetDevice(CUdevice* device) {
    FAKE_ENTRY_INIT("cuCtxGetDevice");
    if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const int ordinal = fake::current_context_device();
    if (ordinal < 0) return CUDA_ERROR_INVALID_CONTEXT;
    *device = ordinal;
    return CUDA_SUCCESS;
}

}  // extern "C"
