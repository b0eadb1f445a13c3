// The fake driver's entry resolution, errors, initialisation, devices and primary contexts.
#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "fake_memory.hpp"
#include "fake_state.hpp"

namespace {

// This library's own handle, for resolving entry points by name.
void* self_handle() {
    static void* handle = [] {
        Dl_info info{};
        dladdr(reinterpret_cast<void*>(&self_handle), &info);
        return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    }();
    return handle;
}

bool is_logical_endpoint_entry(const char* name) {
    return std::strncmp(name, "cuLogicalEndpoint", 17) == 0;
}

}  // namespace

extern "C" {

// Like the real driver: a version above the driver's is refused with CUDA_ERROR_INVALID_VALUE; a name
// the driver lacks (or the profile removes) is success with a null pointer and SYMBOL_NOT_FOUND.
CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* symbolStatus) {
    (void)flags;
    if (symbol == nullptr || pfn == nullptr) return CUDA_ERROR_INVALID_VALUE;
    fake::State& s = fake::state();
    *pfn = nullptr;
    if (cudaVersion > s.driver_version) {
        if (symbolStatus != nullptr) *symbolStatus = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        return CUDA_ERROR_INVALID_VALUE;
    }
    const bool removed =
        std::find(s.missing_entry_points.begin(), s.missing_entry_points.end(), symbol) != s.missing_entry_points.end();
    const bool too_new = (is_logical_endpoint_entry(symbol) && s.driver_version < 13030) ||
                         (std::strcmp(symbol, "cuDevSmResourceSplit") == 0 && s.driver_version < 13010);
    // Like libcuda, the newest ABI of a base name is its _v2 symbol where one exists (cuMemGetInfo_v2
    // has the size_t signature; plain cuMemGetInfo is the 32-bit one of CUDA 2.0).
    void* fn = nullptr;
    if (!removed && !too_new) {
        fn = dlsym(self_handle(), (std::string(symbol) + "_v2").c_str());
        if (fn == nullptr) fn = dlsym(self_handle(), symbol);
    }
    if (fn == nullptr) {
        if (symbolStatus != nullptr) *symbolStatus = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        return CUDA_SUCCESS;
    }
    *pfn = fn;
    if (symbolStatus != nullptr) *symbolStatus = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
    return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, nullptr);
}

CUresult cuGetErrorName(CUresult error, const char** pStr) {
    const char* name = fake::result_name(error);
    if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pStr = name;
    return name != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char** pStr) {
    const char* text = fake::result_text(error);
    if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pStr = text;
    return text != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuInit(unsigned int flags) {
    FAKE_ENTRY("cuInit");
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    fake::State& s = fake::state();
    if (s.init_error != CUDA_SUCCESS) return s.init_error;
    if (s.devices.empty()) return CUDA_ERROR_NO_DEVICE;
    if (!s.initialised) fake::spend(s.init_base_ms + s.init_per_device_ms * static_cast<int>(s.devices.size()));
    s.initialised = true;
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int* version) {
    FAKE_ENTRY("cuDriverGetVersion");
    if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *version = fake::state().driver_version;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* count) {
    FAKE_ENTRY_INIT("cuDeviceGetCount");
    if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *count = static_cast<int>(fake::state().devices.size());
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* dev, int ordinal) {
    FAKE_ENTRY_INIT("cuDeviceGet");
    if (dev == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (fake::device(ordinal) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    *dev = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
    FAKE_ENTRY_INIT("cuDeviceGetName");
    const fake::Device* d = fake::device(dev);
    if (d == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (name == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    std::snprintf(name, static_cast<std::size_t>(len), "%s", d->name.c_str());
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attrib, CUdevice dev) {
    FAKE_ENTRY_INIT("cuDeviceGetAttribute");
    fake::count_variant("cuDeviceGetAttribute", attrib);
    const fake::Device* d = fake::device(dev);
    if (d == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto it = d->attrs.find(static_cast<int>(attrib));
    if (it == d->attrs.end()) return CUDA_ERROR_INVALID_VALUE;
    *value = it->second;
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
    FAKE_ENTRY_INIT("cuDeviceTotalMem");
    const fake::Device* d = fake::device(dev);
    if (d == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *bytes = d->total;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
    FAKE_ENTRY_INIT("cuDeviceGetUuid");
    const fake::Device* d = fake::device(dev);
    if (d == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < 16; ++i) {
        uuid->bytes[i] =
            static_cast<char>(std::stoi(d->uuid_hex.substr(static_cast<std::size_t>(2 * i), 2), nullptr, 16));
    }
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetPCIBusId(char* bus, int len, CUdevice dev) {
    FAKE_ENTRY_INIT("cuDeviceGetPCIBusId");
    const fake::Device* d = fake::device(dev);
    if (d == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (bus == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    std::snprintf(bus, static_cast<std::size_t>(len), "%s", d->pci_bus_id.c_str());
    return CUDA_SUCCESS;
}

// Peer access from the current context's device to `peer`'s: allowed where the profile's "peers" list
// lets the device reach it (as cuDeviceCanAccessPeer says); the copy model times peer copies by the
// same list, so enabling changes nothing else here.
CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
    FAKE_ENTRY_INIT("cuCtxEnablePeerAccess");
    const int dev = fake::current_context_device();
    const int to = fake::context_device(peer);
    if (dev < 0 || to < 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (dev == to || !fake::can_access_peer(dev, to)) return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    return CUDA_SUCCESS;
}

CUresult cuCtxDisablePeerAccess(CUcontext peer) {
    FAKE_ENTRY_INIT("cuCtxDisablePeerAccess");
    if (fake::current_context_device() < 0 || fake::context_device(peer) < 0) return CUDA_ERROR_INVALID_CONTEXT;
    return CUDA_SUCCESS;
}

// From the profile's per-device "peers" list (fake::can_access_peer); a device and itself: 0.
CUresult cuDeviceCanAccessPeer(int* can_access, CUdevice dev, CUdevice peer) {
    FAKE_ENTRY_INIT("cuDeviceCanAccessPeer");
    if (can_access == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (fake::device(dev) == nullptr || fake::device(peer) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    *can_access = fake::can_access_peer(dev, peer) ? 1 : 0;
    return CUDA_SUCCESS;
}

}  // extern "C"
