#include "bandwidth_results.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpu_identity.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

nlohmann::json optional_json(const std::optional<unsigned>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json limit_json(const std::optional<PathLimit>& limit, const std::string& why) {
    if (!limit) return {{"gbps", nullptr}, {"link", nullptr}, {"basis", nullptr}, {"unknown_because", why}};
    const char* link = limit->link == PathLimit::Link::pcie     ? "pcie"
                       : limit->link == PathLimit::Link::c2c    ? "c2c"
                       : limit->link == PathLimit::Link::nvlink ? "nvlink"
                                                                : "hbm";
    return {{"gbps", limit->gbps}, {"link", link}, {"basis", limit->basis}};
}

nlohmann::json link_json(const nvml::LinkInfo& link) {
    const nvml::PcieLink& p = link.pcie;
    nlohmann::json j{{"pcie",
                      {{"generation", optional_json(p.generation)},
                       {"width", optional_json(p.width)},
                       {"max_generation", optional_json(p.max_generation)},
                       {"max_width", optional_json(p.max_width)},
                       {"gpu_max_generation", optional_json(p.gpu_max_generation)},
                       {"replay_counter", optional_json(p.replay_counter)}}},
                     {"c2c", nullptr},
                     {"memory_bus_width_bits", optional_json(link.memory.width_bits)},
                     {"max_memory_clock_mhz", optional_json(link.memory.max_clock_mhz)}};
    if (link.c2c) {
        j["c2c"] = {
            {"links", link.c2c->links}, {"active_links", link.c2c->active_links}, {"max_mbps", link.c2c->max_mbps}};
    }
    nlohmann::json why = nlohmann::json::object();
    for (const auto& [field, text] : link.unavailable) why[field] = text;
    j["unavailable"] = std::move(why);
    return j;
}

nlohmann::json measured_device_json(const DeviceFigures& d) {
    nlohmann::json j{{"device", d.id.ordinal}};
    add_identity(j, d.id);
    j["link"] = link_json(d.limits.link);
    j["nvml_error"] = d.limits.nvml_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.limits.nvml_error);
    j["limits"] = {{"host", limit_json(d.limits.host, d.limits.host_why)},
                   {"memory", limit_json(d.limits.memory, d.limits.memory_why)},
                   {"peer", limit_json(d.limits.peer, d.limits.peer_why)}};
    j["nvlink"] = d.limits.nvlink ? nlohmann::json{{"links", d.limits.nvlink->links},
                                                   {"active_links", d.limits.nvlink->active},
                                                   {"unknown_links", d.limits.nvlink->unknown},
                                                   {"active_mbps", d.limits.nvlink->active_mbps}}
                                  : nlohmann::json(nullptr);
    return j;
}

// The figure counted as nvbandwidth counts it: bytes copied, per direction.
nlohmann::json copied_json(const CopyFigure& f) {
    nlohmann::json out = nlohmann::json::array();
    for (const CopiedFigure& c : f.copied) {
        out.push_back(
            {{"direction", path_name(c.direction)}, {"bytes", c.bytes}, {"seconds", c.seconds}, {"gbps", c.gbps()}});
    }
    return out;
}

nlohmann::json figure_json(const DeviceFigures& d, const CopyFigure& f) {
    const auto limit = limit_of(d.limits, f);
    nlohmann::json j{{"device", d.id.ordinal}};
    add_identity(j, d.id);
    j.update({{"path", path_name(f.path)},
              {"memory", memory_name(f)},
              {"numa_node", f.numa_node ? nlohmann::json(*f.numa_node) : nlohmann::json(nullptr)},
              {"peer", f.peer ? nlohmann::json(*f.peer) : nlohmann::json(nullptr)},
              {"bytes", f.bytes},
              {"count", count_name(byte_count(f.path))},
              {"concurrent", f.concurrent},
              {"copied", copied_json(f)},
              {"iterations", f.iterations},
              {"seconds", f.seconds},
              {"gbps", f.gbps()},
              {"limit_gbps", limit ? nlohmann::json(*limit) : nlohmann::json(nullptr)},
              {"ratio", limit ? nlohmann::json(f.gbps() / *limit) : nlohmann::json(nullptr)}});
    return j;
}

// A text as a cell: none where it is empty (null in the JSON).
CsvValue text_cell(const std::string& text) {
    return text.empty() ? CsvValue{} : CsvValue{text};
}

// A number that may be unknown as a cell of type `T`: none where it is unknown.
template <class T, class V>
CsvValue number_cell(const std::optional<V>& v) {
    return v ? CsvValue{static_cast<T>(*v)} : CsvValue{};
}

// The bytes-copied figure of the direction `direction` of `f`, where it has one.
std::optional<double> copied_gbps(const CopyFigure& f, std::size_t direction) {
    return direction < f.copied.size() ? std::optional<double>(f.copied[direction].gbps()) : std::nullopt;
}

CsvRow figure_row(const DeviceFigures& d, const CopyFigure& f) {
    const auto limit = limit_of(d.limits, f);
    return {std::int64_t{d.id.ordinal},
            text_cell(d.id.uuid),
            text_cell(d.id.pci_bus_id),
            number_cell<std::uint64_t>(d.id.nvml_index),
            std::string(path_name(f.path)),
            memory_name(f),
            number_cell<std::int64_t>(f.numa_node),
            number_cell<std::int64_t>(f.peer),
            f.gbps(),
            number_cell<double>(limit),
            limit ? CsvValue{f.gbps() / *limit} : CsvValue{},
            f.bytes,
            std::int64_t{f.iterations},
            f.seconds,
            std::string(count_name(byte_count(f.path))),
            number_cell<double>(copied_gbps(f, 0)),
            number_cell<double>(copied_gbps(f, 1)),
            f.concurrent};
}

}  // namespace

std::string memory_name(const CopyFigure& f) {
    switch (f.path) {
        case CopyPath::device_to_device:
            return "device";
        case CopyPath::peer:
            return fmt::format("GPU {}", f.peer.value_or(-1));
        default:
            break;
    }
    switch (f.host) {
        case HostMemory::pinned:
            return "pinned";
        case HostMemory::pageable:
            return "pageable";
        case HostMemory::numa:
            return fmt::format("numa:{}", f.numa_node.value_or(-1));
    }
    return "?";
}

nlohmann::json BandwidthResults::to_json() const {
    nlohmann::json devices_json = nlohmann::json::array();
    nlohmann::json figures = nlohmann::json::array();
    for (const DeviceFigures& d : devices) {
        devices_json.push_back(measured_device_json(d));
        for (const CopyFigure& f : d.figures) figures.push_back(figure_json(d, f));
    }
    nlohmann::json sums_json = nlohmann::json::array();
    for (const ConcurrentSum& c : sums) {
        sums_json.push_back({{"path", path_name(c.path)},
                             {"devices", c.devices},
                             {"gbps", c.gbps},
                             {"count", count_name(byte_count(c.path))}});
    }
    return {{"size_bytes", size},
            {"iterations", iterations},
            {"devices", std::move(devices_json)},
            {"figures", std::move(figures)},
            {"sums", std::move(sums_json)}};
}

std::vector<CsvRow> BandwidthResults::csv_rows() const {
    std::vector<CsvRow> rows;
    for (const DeviceFigures& d : devices) {
        for (const CopyFigure& f : d.figures) rows.push_back(figure_row(d, f));
    }
    // --concurrent's sums: a row of no one GPU, in the columns that a sum has.
    for (const ConcurrentSum& c : sums) {
        rows.push_back({CsvValue{}, CsvValue{}, CsvValue{}, CsvValue{}, std::string(path_name(c.path)),
                        std::string("pinned"), CsvValue{}, CsvValue{}, c.gbps, CsvValue{}, CsvValue{}, CsvValue{},
                        CsvValue{}, CsvValue{}, std::string(count_name(byte_count(c.path))), c.gbps, CsvValue{}, true});
    }
    return rows;
}

const std::vector<std::string>& BandwidthResults::csv_columns() {
    static const std::vector<std::string> columns{
        "device", "uuid",        "pci_bus_id",      "nvml_index", "path",  "memory",     "numa_node",
        "peer",   "gbps",        "limit_gbps",      "ratio",      "bytes", "iterations", "seconds",
        "count",  "copied_gbps", "copied_gbps_d2h", "concurrent"};
    return columns;
}

}  // namespace cumemctl::cmd
