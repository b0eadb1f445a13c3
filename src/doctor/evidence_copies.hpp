// The evidence of the checks of the paths memory moves on: host-bandwidth and memory-bandwidth (their
// figures against the limit, at once, clocks and attempts), pcie-link, nvlink and peer-access (evidence.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "doctor/evidence_fields.hpp"
#include "gpu/bandwidth/copy_bandwidth.hpp"

namespace cumemctl::doctor {

// A copy check's figure per path, each written only where the path was measured.
struct PathFigures {
    Maybe<Gbps> d2d_gbps, d2h_gbps, h2d_gbps;
    // The figure of `path`: null for a path doctor does not measure (both, peer).
    const Maybe<Gbps>* at(gpu::CopyPath path) const {
        using gpu::CopyPath;
        return path == CopyPath::host_to_device     ? &h2d_gbps
               : path == CopyPath::device_to_host   ? &d2h_gbps
               : path == CopyPath::device_to_device ? &d2d_gbps
                                                    : nullptr;
    }
    Maybe<Gbps>* at(gpu::CopyPath path) { return const_cast<Maybe<Gbps>*>(std::as_const(*this).at(path)); }
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
        const Maybe<Gbps>* f = figures.at(path);
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

}  // namespace cumemctl::doctor
