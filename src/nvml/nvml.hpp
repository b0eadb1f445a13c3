// The NVML seam: the only code that loads libnvidia-ml (the library behind nvidia-smi). NVML answers
// memory figures and memory health without a CUDA context, in milliseconds. It is optional: without
// it cumemctl works as before and says where each figure came from.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nvml/nvml_api.hpp"

namespace cumemctl::nvml {

// The library that is loaded when neither --libnvml nor CUMEMCTL_LIBNVML names one.
inline constexpr const char* kDefaultLibnvml = "libnvidia-ml.so.1";

// Picks the library to load: the explicit path if given, else $CUMEMCTL_LIBNVML, else libnvidia-ml.so.1.
std::string choose_libnvml(const std::string& explicit_path);

// What was loaded, for reports: the path tried, whether NVML is usable, its driver version, and why not.
struct LibraryInfo {
    std::string library;
    bool loaded = false;
    std::string driver_version;  // nvmlSystemGetDriverVersion, "580.159.04"; empty when unknown
    std::string error;           // why NVML cannot be used, empty when it can
};

// A loaded and initialised NVML (or one that says why not). Loading throws only where root would load a
// library that others can change (Error, permission: open_trusted).
class Library {
public:
    // dlopen()s `library`, resolves the entry points with dlsym and calls nvmlInit_v2. With `watched`,
    // every call names itself in the calling thread's PendingSlot (nvml/watched_api.hpp), nvmlInit_v2 too.
    static Library load(const std::string& library, bool watched = false);
    // A library over an existing table (unit tests): initialised already.
    static Library from_table(const Api& api);

    Library(Library&& other) noexcept;
    Library& operator=(Library&& other) noexcept;
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;
    ~Library();  // nvmlShutdown, dlclose

    bool loaded() const { return info_.loaded; }
    const LibraryInfo& info() const { return info_; }
    const Api& api() const { return api_; }

    // "nvmlDeviceGetRemappedRows: Not Supported (3)": a failed call with NVML's own words.
    std::string describe(std::string_view call, Return result) const;

    // Thread-safe (a const lookup in what load() listed). The device whose UUID is `uuid` ("GPU-xxxxxxxx-..." as
    // cumemctl prints CUDA's), found by UUID and never by index (NVML counts in PCI order and ignores
    // CUDA_VISIBLE_DEVICES). nullopt with `why` set when NVML does not list it or cannot be asked.
    std::optional<Device> device_by_uuid(const std::string& uuid, std::string* why = nullptr) const;

    // The UUIDs of the devices NVML lists ("GPU-..."), in UUID order: every GPU of the node, whatever
    // CUDA_VISIBLE_DEVICES says. Empty where NVML is not loaded or could not list them.
    std::vector<std::string> uuids() const;

    // NVML's index of the device with this UUID (nvidia-smi's index: PCI order), nullopt where NVML
    // does not list it.
    std::optional<unsigned> index_of(const std::string& uuid) const;

    // The minor number of the device with this UUID (its /dev/nvidiaN, dcgm-exporter's device="nvidiaN"),
    // nullopt where NVML does not list it or cannot say.
    std::optional<unsigned> minor_of(const std::string& uuid) const;

private:
    Library() = default;
    // Lists NVML's devices by UUID, once, when the library is loaded; after that the object is only
    // read, so that several threads may look devices up at once.
    void enumerate();

    void* handle_ = nullptr;
    bool initialised_ = false;
    Api api_{};
    LibraryInfo info_{};
    std::string enumerate_error_;
    std::map<std::string, Device, std::less<>> by_uuid_;
    std::map<std::string, unsigned, std::less<>> index_by_uuid_;
    std::map<std::string, unsigned, std::less<>> minor_by_uuid_;
};

// The device with this UUID in `nvml`, or nullopt with `why`: no NVML (null, or not loaded: its
// error), no UUID to look for, or not listed.
std::optional<Device> find_device(const Library* nvml, const std::string& uuid, std::string& why);

}  // namespace cumemctl::nvml
