#include "gpu/vmm/dma_buf.hpp"

#include <unistd.h>

#include <charconv>
#include <climits>

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "cuda/owned_handle.hpp"
#include "gpu/device/devices.hpp"
#include "imex/proc_line.hpp"
#include "util/text_file.hpp"

namespace cumemctl::gpu {
namespace {

// What dma-buf export needs, for a remedy: where the device or the driver says no.
constexpr const char* kDmaBufNeeds =
    "dma-buf export needs NVIDIA's open kernel modules and Linux 5.12 or later (cat /proc/driver/nvidia/version; "
    "uname -r); on other nodes GPUDirect RDMA goes through the nvidia-peermem module (modprobe nvidia-peermem)";

// A field of fdinfo ("exp_name:\tnv_dmabuf"): the text after the colon, blanks trimmed; "" where absent.
std::string fdinfo_field(const std::string& fdinfo, std::string_view key) {
    std::string value;
    imex::for_each_line(fdinfo, [&](const imex::ProcLine& line) {
        const std::string_view text = line.text;
        if (!value.empty() || text.size() <= key.size() || text.substr(0, key.size()) != key || text[key.size()] != ':')
            return;
        value = std::string(imex::trim_blanks(text.substr(key.size() + 1)));
    });
    return value;
}

std::optional<std::uint64_t> number_of(std::string_view text) {
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return v;
}

}  // namespace

std::optional<bool> dma_buf_supported(const DriverApi& api, int device) {
    const auto value = device_attribute(api, device, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED);
    if (!value) return std::nullopt;
    return *value != 0;
}

void require_dma_buf(const DriverApi& api, int device) {
    CU_REQUIRE(api, cuMemGetHandleForAddressRange);
    const auto supported = dma_buf_supported(api, device);
    if (!supported) {
        throw Error(ExitCode::unavailable,
                    fmt::format("this driver does not know whether device {} exports dma-bufs "
                                "(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, CUDA 11.7)",
                                device),
                    kDmaBufNeeds);
    }
    if (!*supported) {
        throw Error(
            ExitCode::unavailable,
            fmt::format("device {} does not export dma-bufs (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0)", device),
            kDmaBufNeeds);
    }
}

UniqueFd export_dma_buf(const DriverApi& api, CUdeviceptr address, std::uint64_t size) {
    int fd = -1;
    CU_CALL(api, cuMemGetHandleForAddressRange, &fd, address, static_cast<size_t>(size),
            CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0ULL);
    return UniqueFd(fd);
}

DmaBufInfo inspect_dma_buf(int fd, const std::string& proc) {
    DmaBufInfo info;
    info.fd = fd;
    const std::string fdinfo = try_read_text_file(fmt::format("{}/self/fdinfo/{}", proc, fd)).value_or(std::string());
    info.exporter = fdinfo_field(fdinfo, "exp_name");
    info.size = number_of(fdinfo_field(fdinfo, "size"));
    const off_t end = ::lseek(fd, 0, SEEK_END);
    if (end >= 0) info.end = static_cast<std::uint64_t>(end);
    char link[PATH_MAX] = {};
    const ssize_t n = ::readlink(fmt::format("{}/self/fd/{}", proc, fd).c_str(), link, sizeof link - 1);
    if (n > 0) info.link.assign(link, static_cast<std::size_t>(n));
    return info;
}

std::optional<std::string> dma_buf_mismatch(const DmaBufInfo& info, std::uint64_t size) {
    if (info.exporter.empty()) {
        return fmt::format("descriptor {} is no dma-buf: its fdinfo names no exporter (it is {})", info.fd,
                           info.link.empty() ? std::string("unknown") : info.link);
    }
    if (info.exporter != kNvidiaDmaBufExporter) {
        return fmt::format("descriptor {} is a dma-buf of '{}', not NVIDIA's ({})", info.fd, info.exporter,
                           kNvidiaDmaBufExporter);
    }
    if (info.size != size) {
        return fmt::format("the dma-buf is {} bytes by its fdinfo, {} asked",
                           info.size ? fmt::format("{}", *info.size) : std::string("of no stated size"), size);
    }
    if (info.end && *info.end != size) {
        return fmt::format("the dma-buf ends at byte {} (lseek), {} asked", *info.end, size);
    }
    return std::nullopt;
}

DmaBufExport export_and_inspect(const DriverApi& api, CUdeviceptr address, std::uint64_t size, const std::string& proc,
                                steps::StepLog& log) {
    return log.time("dma-buf", "cuMemGetHandleForAddressRange", [&] {
        DmaBufExport e;
        e.size = size;
        UniqueFd fd = export_dma_buf(api, address, size);
        e.info = inspect_dma_buf(fd.get(), proc);
        e.mismatch = dma_buf_mismatch(e.info, size);
        return e;  // the descriptor closes here
    });
}

DmaBufExport export_linear_memory(const DriverApi& api, std::uint64_t size, const std::string& proc,
                                  steps::StepLog& log) {
    OwnedHandle<CUdeviceptr> memory([&api](CUdeviceptr p) { return api.cuMemFree(p); });
    log.call("alloc", "cuMemAlloc", api.cuMemAlloc, memory.out(), static_cast<size_t>(size));
    DmaBufExport e = export_and_inspect(api, memory.get(), size, proc, log);
    log.call("free", "cuMemFree", api.cuMemFree, memory.get());
    memory.release();
    return e;
}

nlohmann::json to_json(const DmaBufExport& e) {
    auto opt = [](const std::optional<std::uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    return {{"fd", e.info.fd},
            {"exporter", e.info.exporter.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.info.exporter)},
            {"size_bytes", opt(e.info.size)},
            {"end_bytes", opt(e.info.end)},
            {"link", e.info.link.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.info.link)},
            {"size_asked_bytes", e.size},
            {"nvidia_dma_buf", !e.mismatch},
            {"mismatch", e.mismatch ? nlohmann::json(*e.mismatch) : nlohmann::json(nullptr)}};
}

}  // namespace cumemctl::gpu
