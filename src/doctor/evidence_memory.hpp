// The evidence of the checks of device memory: memory-health, locality, the checks that make memory
// (vmm, posix-fd-ipc, ipc-pool, host-alloc, fabric-alloc, pool-trim) and gpudirect (evidence.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "doctor/evidence_fields.hpp"
#include "gpu/device/locality.hpp"
#include "gpu/memtest/memtest_record.hpp"
#include "gpu/pool/pool_trim.hpp"
#include "gpu/verify/verify.hpp"
#include "gpu/vmm/dma_buf.hpp"
#include "nvml/memory_health.hpp"
#include "steps/step.hpp"

namespace cumemctl::doctor {

// memory-health: what NVML says of the memory, the GPU's UUID and its last memtest (or why there is none).
struct MemoryHealthEvidence {
    nvml::MemoryHealth health;
    std::string uuid;
    std::optional<gpu::memtest::MemtestRecord> last_memtest;
    Maybe<std::string> last_memtest_unavailable;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v(kMerged, s.health);
        v("uuid", s.uuid, kReadByFleet);
        v("last_memtest", s.last_memtest);
        v("last_memtest_unavailable", s.last_memtest_unavailable);
    }
};

// One locality domain that locality checked: a localized allocation, a localized pool and one of its
// blocks, each placement read back.
struct DomainChecked {
    int domain = 0;
    std::uint64_t allocation_bytes = 0;
    gpu::Placement allocation, pool, pool_block;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("domain", s.domain);
        v("allocation_bytes", s.allocation_bytes);
        v("allocation", s.allocation);
        v("pool", s.pool);
        v("pool_block", s.pool_block);
    }
};

// locality: what the device says of its locality domains, each domain checked, and the default pool's
// placement (which must read as not localized).
struct LocalityEvidence {
    gpu::LocalityInfo info;
    Maybe<std::vector<DomainChecked>> domains_checked;
    Maybe<gpu::Placement> default_pool;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v(kMerged, s.info);
        v("domains_checked", s.domains_checked);
        v("default_pool", s.default_pool);
    }
};

// This process's memory on the device as NVML counts it, before and after a check's work, or why not.
struct ProcessMemory {
    Maybe<std::string> source;  // "nvml"
    Maybe<std::uint64_t> before_bytes, after_bytes;
    Maybe<std::int64_t> delta_bytes;
    Maybe<std::string> unavailable;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("source", s.source);
        v("before_bytes", s.before_bytes);
        v("after_bytes", s.after_bytes);
        v("delta_bytes", s.delta_bytes);
        v("unavailable", s.unavailable);
    }
};

// The second process that imported a check's memory: its pid, exit status (null while it serves on),
// steps and check of the pattern.
struct ImporterEvidence {
    int pid = 0;
    std::optional<int> exit_status;
    std::vector<steps::Step> steps;
    Maybe<gpu::VerifyResult> verify;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("pid", s.pid);
        v("exit_status", s.exit_status);
        v("steps", s.steps);
        v("verify", s.verify);
    }
};

// What a memory check made (vmm, posix-fd-ipc, ipc-pool, fabric-alloc): the size, the steps, the
// pattern's check, the importer, NVML's count of this process's memory, the handles not given back,
// and a failure's cause where it is a set-up step (fabric-alloc).
struct MemoryEvidence {
    Maybe<std::uint64_t> size_bytes;
    Maybe<std::vector<steps::Step>> steps;
    Maybe<gpu::VerifyResult> verify;
    Maybe<ImporterEvidence> importer;
    Maybe<ProcessMemory> process_memory;
    Maybe<std::uint64_t> handles_not_released;
    Maybe<std::string> cause;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("size_bytes", s.size_bytes);
        v("steps", s.steps);
        v("verify", s.verify);
        v("importer", s.importer);
        v("process_memory", s.process_memory);
        v("handles_not_released", s.handles_not_released);
        v("cause", s.cause);
    }
};

// host-alloc: what each host location made (host, host_numa), as a memory check says it.
struct HostAllocEvidence {
    Maybe<MemoryEvidence> host, host_numa;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("host", s.host);
        v("host_numa", s.host_numa);
    }
};

// pool-trim: the trim's figures, the workload's pattern and how long cuMemPoolTrimTo took.
struct PoolTrimEvidence {
    gpu::TrimFigures figures;
    std::string pattern;
    double trim_seconds = 0;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v(kMerged, s.figures);
        v("pattern", s.pattern);
        v("trim_seconds", s.trim_seconds);
    }
};

// One dma-buf export that gpudirect tried, and of which memory ("cuMemCreate", "cuMemAlloc").
struct ExportEvidence {
    gpu::DmaBufExport dma_buf;
    std::string memory;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v(kMerged, s.dma_buf);
        v("memory", s.memory);
    }
};

// gpudirect: the node's RDMA devices and modules, what the device says of dma-buf and GPUDirect RDMA
// (null: unknown), and where exports were tried, each export with the steps that made it.
struct GpudirectEvidence {
    std::vector<std::string> rdma_devices;
    bool nvidia_peermem = false;
    std::optional<std::string> kernel_modules, kernel;
    std::optional<bool> dma_buf, gpudirect_rdma, gpudirect_rdma_vmm;
    Maybe<std::vector<ExportEvidence>> exports;
    Maybe<std::vector<steps::Step>> steps;
    Maybe<std::uint64_t> handles_not_released;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("rdma_devices", s.rdma_devices);
        v("nvidia_peermem", s.nvidia_peermem);
        v("kernel_modules", s.kernel_modules);
        v("kernel", s.kernel);
        v("dma_buf", s.dma_buf);
        v("gpudirect_rdma", s.gpudirect_rdma);
        v("gpudirect_rdma_vmm", s.gpudirect_rdma_vmm);
        v("exports", s.exports);
        v("steps", s.steps);
        v("handles_not_released", s.handles_not_released);
    }
};

}  // namespace cumemctl::doctor
