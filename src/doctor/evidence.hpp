// doctor's evidence, typed: what each family of checks read or measured, one type a family, in place of
// JSON inside. Each type describes its fields once (`fields`: name, member, who reads it); the report's
// JSON is written from that description (evidence_json.cpp) and fleet reads a report back by name through
// the same description (fleet/report_decode.cpp). This header pulls no check in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "gpu/bandwidth/copy_bandwidth.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/device/locality.hpp"
#include "doctor/imex_survey.hpp"
#include "gpu/memtest/memtest_record.hpp"
#include "gpu/pool/pool_trim.hpp"
#include "gpu/verify/verify.hpp"
#include "gpu/vmm/dma_buf.hpp"
#include "nvml/fabric_info.hpp"
#include "nvml/memory_health.hpp"
#include "steps/step.hpp"

namespace cumemctl::doctor {

// The mark of a field that fleet reads back as well as the report's readers (people, scripts): fleet
// decodes it by its name and type, and refuses a report whose value is of another type or out of range.
// A field without it is skipped unbuilt. A field description is `fields(self, visit)`, calling
// visit(name, member) or visit(name, member, kReadByFleet) for each field.
struct ReadByFleet {};
inline constexpr ReadByFleet kReadByFleet{};

// A field absent from the JSON while empty (a std::optional field writes null instead).
template <class T>
struct Maybe : std::optional<T> {
    using std::optional<T>::optional;
    template <class U = T>
    requires(std::is_constructible_v<T, U&&> && !std::is_same_v<std::remove_cvref_t<U>, Maybe>) Maybe& operator=(
        U&& value) {
        this->emplace(std::forward<U>(value));
        return *this;
    }
};

// The name of a field whose members are written into the object that holds it (a type of another layer
// with a JSON of its own, such as NVML's memory health).
inline constexpr const char* kMerged = "";

// A bandwidth in GB/s: fleet reads it back as a number from 0 to its most.
struct Gbps {
    double value = 0;
    bool operator==(const Gbps&) const = default;
};

// A number of GPUs: fleet reads it back as a whole number from 1 to its cap.
struct GpuCount {
    std::size_t value = 0;
    bool operator==(const GpuCount&) const = default;
};

// A check that had no NVML to ask (host-bandwidth, pcie-link, memory-health, fabric): why.
struct NvmlUnavailable {
    std::string nvml_error;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("nvml_error", s.nvml_error);
    }
};

// driver: the library, the CUDA version it says and the kernel module's (null where none is read).
struct DriverEvidence {
    std::string library;
    Maybe<int> cuda_version;
    Maybe<std::string> version_string;
    Maybe<std::optional<std::string>> kernel_module;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("library", s.library);
        v("cuda_version", s.cuda_version);
        v("version_string", s.version_string);
        v("kernel_module", s.kernel_module, kReadByFleet);
    }
};

// devices: how many the driver sees, their names, and CUDA_VISIBLE_DEVICES where it is set.
struct DevicesEvidence {
    int count = 0;
    Maybe<std::string> cuda_visible_devices;
    Maybe<std::vector<std::string>> names;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("count", s.count);
        v("cuda_visible_devices", s.cuda_visible_devices);
        v("names", s.names, kReadByFleet);
    }
};

// A copy check's figure per path, each written only where the path was measured.
struct PathFigures {
    Maybe<Gbps> d2d_gbps, d2h_gbps, h2d_gbps;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("d2d_gbps", s.d2d_gbps, kReadByFleet);
        v("d2h_gbps", s.d2h_gbps, kReadByFleet);
        v("h2d_gbps", s.h2d_gbps, kReadByFleet);
    }
};

// What the clocks did while a check's copies ran (NVML's samples).
struct ClockEvidence {
    int samples = 0;
    std::optional<unsigned> min_sm_mhz, min_memory_mhz;
    std::optional<unsigned long long> reasons_mask;
    std::vector<std::string> slowdown_reasons;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("samples", s.samples);
        v("min_sm_mhz", s.min_sm_mhz);
        v("min_memory_mhz", s.min_memory_mhz);
        v("reasons_mask", s.reasons_mask);
        v("slowdown_reasons", s.slowdown_reasons);
    }
};

// One path's figures with every GPU of the node copying at once: this GPU's, the node's sum, the median GPU's.
struct AtOncePath {
    Maybe<Gbps> gbps, sum_gbps, median_gbps;
};

// host-bandwidth with every GPU at once: how many copied together, this GPU's figures, the node's sums
// and the median GPU's; or why the copies failed.
struct AtOnceEvidence {
    Maybe<std::string> error;
    Maybe<GpuCount> gpus;
    AtOncePath h2d, d2h;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("error", s.error);
        v("gpus", s.gpus, kReadByFleet);
        v("h2d_gbps", s.h2d.gbps);
        v("h2d_sum_gbps", s.h2d.sum_gbps, kReadByFleet);
        v("h2d_median_gbps", s.h2d.median_gbps);
        v("d2h_gbps", s.d2h.gbps);
        v("d2h_sum_gbps", s.d2h.sum_gbps, kReadByFleet);
        v("d2h_median_gbps", s.d2h.median_gbps);
    }
};

// host-bandwidth and memory-bandwidth: the best attempt's figures against the path's limit, every
// attempt's figures, what the copies were, the clocks meanwhile and, for the host, the copies at once.
struct CopyEvidence {
    std::optional<Gbps> limit_gbps;  // always measured against; none only in a report read back without it
    std::string limit_basis;
    PathFigures figures;
    Maybe<double> d2d_ratio, d2h_ratio, h2d_ratio;
    std::uint64_t size_bytes = 0;
    int iterations = 0;
    std::vector<PathFigures> attempts;
    int most_attempts = 0;
    std::optional<int> numa_node;
    std::optional<ClockEvidence> clocks;
    Maybe<AtOnceEvidence> at_once;
    // The best attempt's figure of `path` in GB/s, where it was measured (the bandwidth metrics).
    std::optional<double> gbps(gpu::CopyPath path) const {
        using gpu::CopyPath;
        const Maybe<Gbps>* f = path == CopyPath::host_to_device     ? &figures.h2d_gbps
                               : path == CopyPath::device_to_host   ? &figures.d2h_gbps
                               : path == CopyPath::device_to_device ? &figures.d2d_gbps
                                                                    : nullptr;
        return f != nullptr && *f ? std::optional<double>((*f)->value) : std::nullopt;
    }
    // The limit the figures were held against, in GB/s.
    std::optional<double> limit() const { return limit_gbps ? std::optional<double>(limit_gbps->value) : std::nullopt; }
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("limit_gbps", s.limit_gbps, kReadByFleet);
        v("limit_basis", s.limit_basis);
        v(kMerged, s.figures, kReadByFleet);
        v("d2d_ratio", s.d2d_ratio);
        v("d2h_ratio", s.d2h_ratio);
        v("h2d_ratio", s.h2d_ratio);
        v("size_bytes", s.size_bytes);
        v("iterations", s.iterations);
        v("attempts", s.attempts);
        v("most_attempts", s.most_attempts);
        v("numa_node", s.numa_node);
        v("clocks", s.clocks);
        v("at_once", s.at_once, kReadByFleet);
    }
};

// A Grace GPU's chip-to-chip link (pcie-link).
struct C2cEvidence {
    unsigned links = 0, active_links = 0, unknown_links = 0;
    unsigned long long max_mbps = 0;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("links", s.links);
        v("active_links", s.active_links);
        v("unknown_links", s.unknown_links);
        v("max_mbps", s.max_mbps);
    }
};

// pcie-link: the link now and at its maximum, read again under load (not with --quick), or the C2C link.
struct PcieLinkEvidence {
    std::optional<unsigned> generation, width, max_generation, max_width, gpu_max_generation, replay_counter;
    Maybe<std::optional<unsigned>> generation_under_load, width_under_load, replay_counter_after;
    Maybe<double> load_copy_gbps;
    Maybe<C2cEvidence> c2c;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("generation", s.generation);
        v("width", s.width);
        v("max_generation", s.max_generation);
        v("max_width", s.max_width);
        v("gpu_max_generation", s.gpu_max_generation);
        v("replay_counter", s.replay_counter);
        v("generation_under_load", s.generation_under_load);
        v("width_under_load", s.width_under_load);
        v("load_copy_gbps", s.load_copy_gbps);
        v("replay_counter_after", s.replay_counter_after);
        v("c2c", s.c2c);
    }
};

// capabilities: the device's identity and what it supports, as the driver answers (the capabilities
// written as gpu/device writes them, capabilities_json); NFD's labels read `device`.
struct CapabilitiesEvidence {
    gpu::DeviceInfo device;
    std::string compute_capability;  // "9.0"
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("name", s.device.name);
        v("uuid", s.device.uuid, kReadByFleet);
        v("pci_bus_id", s.device.pci_bus_id);
        v("compute_capability", s.compute_capability);
        v("total_bytes", s.device.total_bytes);
        v("capabilities", s.device.capabilities, kReadByFleet);
    }
};

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

// fabric: the GPU's place in the NVLink fabric as NVML describes it (NFD's labels read it), its UUID, and
// whether IMEX is set up.
struct FabricEvidence {
    nvml::FabricInfo fabric;
    std::string uuid;
    bool imex_configured = false;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v(kMerged, s.fabric);
        v("uuid", s.uuid, kReadByFleet);
        v("imex_configured", s.imex_configured);
    }
};

// nvlink: the GPU's links, the most any other GPU has up, and the path's limit (null where unknown);
// or, for a GPU without NVLink, why (`unavailable`).
struct NvlinkEvidence {
    Maybe<unsigned> links, active_links, unknown_links;
    Maybe<unsigned long long> active_mbps;
    Maybe<unsigned> peers_most_active_links;
    Maybe<std::optional<double>> limit_gbps;
    Maybe<std::string> unavailable;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("links", s.links);
        v("active_links", s.active_links);
        v("unknown_links", s.unknown_links);
        v("active_mbps", s.active_mbps);
        v("peers_most_active_links", s.peers_most_active_links);
        v("limit_gbps", s.limit_gbps);
        v("nvlink_unavailable", s.unavailable);
    }
};

// One kind of Xid on one GPU, as the kernel's log gives it.
struct XidEntry {
    std::string gpu;
    std::optional<int> device;
    int xid = 0, count = 0;
    std::optional<std::string> kind, meaning;
    std::string judged_by;  // "xid", "memory-health" (which judges it), "none" (no meaning known)
    std::optional<double> last_seconds_after_boot;
    std::string last_time;
    std::optional<std::string> last_text;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("gpu", s.gpu);
        v("device", s.device);
        v("xid", s.xid);
        v("count", s.count);
        v("kind", s.kind);
        v("meaning", s.meaning);
        v("judged_by", s.judged_by);
        v("last_seconds_after_boot", s.last_seconds_after_boot);
        v("last_time", s.last_time);
        v("last_text", s.last_text);
    }
};

// xid: the kernel log read, how many records, whether from boot, and the Xids found, worst first.
struct XidEvidence {
    std::string log;
    Maybe<std::size_t> records;
    Maybe<bool> from_boot;
    Maybe<std::vector<XidEntry>> xids;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("log", s.log);
        v("records", s.records);
        v("from_boot", s.from_boot);
        v("xids", s.xids);
    }
};

// context: how long the context took, and the device's free and total memory where the driver says.
struct ContextEvidence {
    double context_seconds = 0;
    Maybe<std::size_t> free_bytes, total_bytes;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("context_seconds", s.context_seconds);
        v("free_bytes", s.free_bytes);
        v("total_bytes", s.total_bytes);
    }
};

// logical-endpoints: what the device answers (null: unknown), and the entry points the driver lacks.
struct EndpointsEvidence {
    std::optional<bool> unicast, multicast;
    Maybe<std::vector<std::string>> missing_entry_points;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("unicast", s.unicast);
        v("multicast", s.multicast);
        v("missing_entry_points", s.missing_entry_points);
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

// One ordered pair of GPUs that peer-access tried: reader reads owner's memory.
struct PeerPair {
    int reader = 0, owner = 0;
    bool can_access_peer = false, ok = false;
    std::optional<double> gbps;  // null where the read failed
    Maybe<std::string> error;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("reader", s.reader);
        v("owner", s.owner);
        v("can_access_peer", s.can_access_peer);
        v("ok", s.ok);
        v("gbps", s.gbps);
        v("error", s.error);
    }
};

// peer-access: the bytes each pair read, every pair, and the median pair's rate (where one read).
struct PeerEvidence {
    std::uint64_t bytes = 0;
    std::vector<PeerPair> pairs;
    Maybe<double> median_gbps;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("bytes", s.bytes);
        v("pairs", s.pairs);
        v("median_gbps", s.median_gbps);
    }
};

// A GPU as one source lists it (inventory): its bus id and UUID, null where the source does not say.
struct SeenGpu {
    std::optional<std::string> pci_bus_id, uuid;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("pci_bus_id", s.pci_bus_id);
        v("uuid", s.uuid);
    }
};

// inventory: the GPUs CUDA, NVML and the kernel list (null: a source not asked), those missing from
// CUDA's view, the driver version, and CUDA_VISIBLE_DEVICES where it is set.
struct InventoryEvidence {
    std::vector<SeenGpu> cuda;
    std::optional<std::vector<SeenGpu>> nvml, kernel;
    std::vector<SeenGpu> missing;
    std::optional<std::string> driver_version;
    Maybe<std::string> cuda_visible_devices;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("cuda", s.cuda);
        v("nvml", s.nvml);
        v("kernel", s.kernel);
        v("missing", s.missing);
        v("driver_version", s.driver_version);
        v("cuda_visible_devices", s.cuda_visible_devices);
    }
};

// imex-channels: the channel nodes and what decides them, the user they were judged for, and whether
// several people use the node.
struct ChannelsEvidence {
    ChannelSurvey survey;
    Maybe<std::string> user;
    Maybe<bool> multi_user;
    Maybe<std::string> multi_user_reason;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v(kMerged, s.survey);
        v("user", s.user);
        v("multi_user", s.multi_user);
        v("multi_user_reason", s.multi_user_reason);
    }
};

// What nvidia-imex-ctl answered (imex-domain): its exit code, whether it timed out, its first line (-q).
struct CtlEvidence {
    int exit_code = -1;
    bool timed_out = false;
    Maybe<std::string> output;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("exit_code", s.exit_code);
        v("timed_out", s.timed_out);
        v("output", s.output);
    }
};

// One node of the IMEX domain as nvidia-imex-ctl -N -j lists it.
struct ImexNodeEvidence {
    std::string node, host, status, version;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("node", s.node);
        v("host", s.host);
        v("status", s.status);
        v("version", s.version);
    }
};

// One finding of imex-domain: whether it fails or warns, in words.
struct ImexFinding {
    std::string status, finding;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("status", s.status);
        v("finding", s.finding);
    }
};

// imex-domain: the GPUs attached to a fabric, the unit, the files, the daemon and the command service's
// answers, the domain and its nodes, and the findings; each only where the check got that far.
struct ImexDomainEvidence {
    int attached_gpus = 0;
    std::string unit;
    Maybe<std::string> managed_externally, config, nodes_file;
    Maybe<std::vector<std::string>> nodes;
    Maybe<bool> running;
    Maybe<std::string> imex_ctl;
    Maybe<CtlEvidence> query, domain_query;
    Maybe<std::string> domain;
    Maybe<std::vector<ImexNodeEvidence>> domain_nodes;
    Maybe<bool> command_service;
    Maybe<std::vector<ImexFinding>> findings;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("attached_gpus", s.attached_gpus);
        v("unit", s.unit);
        v("managed_externally", s.managed_externally);
        v("config", s.config);
        v("nodes_file", s.nodes_file);
        v("nodes", s.nodes);
        v("running", s.running);
        v("imex_ctl", s.imex_ctl);
        v("query", s.query);
        v("domain_query", s.domain_query);
        v("domain", s.domain);
        v("domain_nodes", s.domain_nodes);
        v("command_service", s.command_service);
        v("findings", s.findings);
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

// A check cut short by its time budget (budget.cpp): the budget, and the driver call it waited on.
struct TimeoutEvidence {
    double budget_seconds = 0;
    std::optional<std::string> pending_call;
    Maybe<double> pending_seconds;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("budget_seconds", s.budget_seconds);
        v("pending_call", s.pending_call);
        v("pending_seconds", s.pending_seconds);
    }
};

// A check's outcome carries no evidence (many skips): its details are an empty object.
struct NoEvidence {
    template <class Self, class Visit>
    static void fields(Self&, Visit&&) {}
};

// The evidence of one check: one type a family. A closed set held by value, so that an outcome copies
// like the value it is and a reader asks for its family with std::get_if.
using Evidence = std::variant<NoEvidence, NvmlUnavailable, DriverEvidence, DevicesEvidence, CapabilitiesEvidence,
                              MemoryHealthEvidence, FabricEvidence, CopyEvidence, PcieLinkEvidence, NvlinkEvidence,
                              XidEvidence, ContextEvidence, EndpointsEvidence, LocalityEvidence, PeerEvidence,
                              InventoryEvidence, ChannelsEvidence, ImexDomainEvidence, GpudirectEvidence,
                              MemoryEvidence, HostAllocEvidence, PoolTrimEvidence, TimeoutEvidence>;

// The evidence's JSON (a check's "details"), written from its type's field description.
nlohmann::json to_json(const Evidence& evidence);

// One process that held a GPU a check needed, with how long it had run (/proc), or why that is unknown.
struct Holder {
    GpuProcess process;
    std::optional<double> seconds_running;
    Maybe<std::string> seconds_running_unavailable;
};

// Who held the GPU when a check found it short of memory or busy (busy.cpp): the processes NVML lists
// ("held_by"), none, or unknown with why ("held_by": null, "held_by_unavailable").
struct HeldBy {
    std::optional<std::vector<Holder>> holders;
    Maybe<std::string> unavailable;
};

// Writes `held` into `details` ("held_by", "held_by_unavailable").
void add_held_by(nlohmann::json& details, const HeldBy& held);

}  // namespace cumemctl::doctor
