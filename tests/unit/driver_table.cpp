#include "driver_table.hpp"

#include <cstring>

namespace testing_driver {

Model& model() {
    static Model m;
    return m;
}

cumemctl::DriverApi table() {
    cumemctl::DriverApi api{};
    api.cuGetErrorName = [](CUresult r, const char** s) {
        *s = r == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_OTHER";
        return CUDA_SUCCESS;
    };
    api.cuGetErrorString = [](CUresult, const char** s) {
        *s = "text";
        return CUDA_SUCCESS;
    };
    api.cuInit = [](unsigned int) { return CUDA_SUCCESS; };
    api.cuDeviceGetCount = [](int* n) {
        *n = model().device_count;
        return CUDA_SUCCESS;
    };
    api.cuDeviceGet = [](CUdevice* d, int o) {
        *d = o;
        return o < model().device_count ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
    };
    api.cuDeviceGetName = [](char* name, int len, CUdevice) {
        std::strncpy(name, "Test GPU", static_cast<size_t>(len));
        return CUDA_SUCCESS;
    };
    api.cuDeviceGetAttribute = [](int* v, CUdevice_attribute a, CUdevice) {
        const auto it = model().attrs.find(static_cast<int>(a));
        if (it == model().attrs.end()) return CUDA_ERROR_INVALID_VALUE;
        *v = it->second;
        return CUDA_SUCCESS;
    };
    api.cuDeviceTotalMem = [](size_t* b, CUdevice) {
        *b = model().total;
        return CUDA_SUCCESS;
    };
    api.cuDeviceGetUuid = [](CUuuid* u, CUdevice) {
        for (int i = 0; i < 16; ++i) u->bytes[i] = static_cast<char>(i * 17);
        return CUDA_SUCCESS;
    };
    api.cuDevicePrimaryCtxRetain = [](CUcontext* c, CUdevice) {
        if (model().retain_result != CUDA_SUCCESS) return model().retain_result;
        ++model().retained;
        *c = reinterpret_cast<CUcontext>(0x1);
        return CUDA_SUCCESS;
    };
    api.cuDevicePrimaryCtxRelease = [](CUdevice) {
        --model().retained;
        return CUDA_SUCCESS;
    };
    api.cuCtxSetCurrent = [](CUcontext) { return CUDA_SUCCESS; };
    api.cuMemGetInfo = [](size_t* f, size_t* t) {
        *f = model().free;
        *t = model().total;
        return CUDA_SUCCESS;
    };
    return api;
}

}  // namespace testing_driver
