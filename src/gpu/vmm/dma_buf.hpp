// dma-buf export of device memory (cuMemGetHandleForAddressRange, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD):
// what NCCL, UCX and NVSHMEM hand to an RDMA NIC for GPUDirect RDMA, and what the kernel says the
// descriptor it gives back is. The descriptor is owned (UniqueFd) and closed on every path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cuda/driver_api.hpp"
#include "steps/step_log.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl::gpu {

// The exporter name NVIDIA's kernel module gives its dma-bufs (exp_name in /proc/PID/fdinfo/FD).
inline constexpr std::string_view kNvidiaDmaBufExporter = "nv_dmabuf";

// What the kernel says an exported descriptor is.
struct DmaBufInfo {
    int fd = -1;                        // its number while it was open (closed since)
    std::string exporter;               // fdinfo's exp_name; "" where fdinfo has none (no dma-buf)
    std::optional<std::uint64_t> size;  // fdinfo's size
    std::optional<std::uint64_t> end;   // lseek(fd, 0, SEEK_END)
    std::string link;                   // where PROC/self/fd/FD links ("/dmabuf:" for a dma-buf)
};

// One export: what the kernel says, and why it is not an NVIDIA dma-buf of the size asked (nullopt
// when it is).
struct DmaBufExport {
    std::uint64_t size = 0;  // as asked
    DmaBufInfo info;
    std::optional<std::string> mismatch;
};

// Whether the device offers dma-buf export: CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED (nullopt where the
// driver does not know it, before CUDA 11.7) and the entry point.
std::optional<bool> dma_buf_supported(const DriverApi& api, int device);

// Throws Error (unavailable) naming why the device cannot export dma-bufs: the driver lacks the entry
// point or the attribute, or the device says no. Nothing where it can.
void require_dma_buf(const DriverApi& api, int device);

// Exports [address, address + size) as a dma-buf descriptor. Throws Error naming the driver call.
UniqueFd export_dma_buf(const DriverApi& api, CUdeviceptr address, std::uint64_t size);

// What the kernel says `fd` is: PROC/self/fdinfo/FD and the PROC/self/fd/FD link, where `proc` is
// /proc (under a test's system root, where a fake driver writes them), and the descriptor's end.
DmaBufInfo inspect_dma_buf(int fd, const std::string& proc);

// Why `info` is not an NVIDIA dma-buf of `size` bytes; nullopt where it is.
std::optional<std::string> dma_buf_mismatch(const DmaBufInfo& info, std::uint64_t size);

// Exports the range, reads what the kernel says of it and closes it: the step "dma-buf".
DmaBufExport export_and_inspect(const DriverApi& api, CUdeviceptr address, std::uint64_t size, const std::string& proc,
                                steps::StepLog& log);

// The same for `size` bytes of cuMemAlloc memory in the current context, freed afterwards (steps
// "alloc", "dma-buf", "free"). Throws Error for a failed call, after freeing.
DmaBufExport export_linear_memory(const DriverApi& api, std::uint64_t size, const std::string& proc,
                                  steps::StepLog& log);

// {"fd", "exporter", "size_bytes", "end_bytes", "link", "size_asked_bytes", "nvidia_dma_buf", "mismatch"}
nlohmann::json to_json(const DmaBufExport& e);

}  // namespace cumemctl::gpu
