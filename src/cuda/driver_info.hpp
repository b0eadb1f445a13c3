// The driver's identity: which library was tried, whether it loaded, and its version. Part of the
// driver seam; reports carry it as they find it.
#pragma once

#include <string>

namespace cumemctl {

// What the report says about the driver library: which one, whether it loaded, and its version.
struct DriverInfo {
    std::string library;  // the path or soname that was tried
    bool loaded = false;
    int version = 0;    // cuDriverGetVersion, 0 when unknown
    std::string error;  // why it did not load, empty when it did
};

// "13.0" for 13000, "12.4" for 12040: a CUDA version as cuDriverGetVersion and the driver table write it.
inline std::string cuda_version_string(int version) {
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace cumemctl
