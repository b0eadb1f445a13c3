#include "matrix/records.hpp"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "ipc/problem_wire.hpp"
#include "matrix/rank_identity.hpp"
#include "matrix/strict_fields.hpp"

namespace cumemctl::matrix {
namespace {

constexpr const char* kCardFormat = "cumemctl.fabric-matrix.card";
constexpr const char* kRowFormat = "cumemctl.fabric-matrix.row";
constexpr int kFormatVersion = 1;

nlohmann::json problem_or_null(const std::optional<Problem>& p) {
    return p ? ipc::problem_to_json(*p) : nlohmann::json(nullptr);
}

// The format and version every file starts with.
void check_format(StrictFields& f, const char* format) {
    if (f.text("format") != format) invalid(fmt::format("the file is no {}", format));
    if (f.integer("format_version", 0, 1 << 20) != kFormatVersion) {
        invalid(fmt::format("the file has another format version (this cumemctl reads {})", kFormatVersion));
    }
}

bool is_hex(const std::string& s) {
    for (const char c : s) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    return true;
}

}  // namespace

std::string card_name(const std::string& run, int rank) {
    return fmt::format("{}.card.{}", run, rank);
}
std::string row_name(const std::string& run, int rank) {
    return fmt::format("{}.row.{}", run, rank);
}
std::string done_name(const std::string& run, int rank) {
    return fmt::format("{}.done.{}", run, rank);
}

nlohmann::json to_json(const Card& c) {
    nlohmann::json j = {{"format", kCardFormat}, {"format_version", kFormatVersion},
                        {"run", c.run},          {"rank", c.rank},
                        {"ranks", c.ranks},      {"host", c.host},
                        {"device", c.device},    {"gpu_uuid", c.gpu_uuid},
                        {"size", c.size},        {"handle_type", c.handle_type},
                        {"handle", c.handle},    {"seed", c.seed},
                        {"version", c.version},  {"driver_version", c.driver_version},
                        {"pid", c.pid},          {"error", problem_or_null(c.error)}};
    j["pci_bus_id"] = c.pci_bus_id;
    j["nvml_index"] = c.nvml_index ? nlohmann::json(*c.nvml_index) : nlohmann::json(nullptr);
    j["fabric_attached"] = c.fabric_attached ? nlohmann::json(*c.fabric_attached) : nlohmann::json(nullptr);
    j["fabric_cluster_uuid"] = c.fabric_cluster_uuid;
    j["fabric_clique"] = c.fabric_clique;
    return j;
}

std::string fabric_domain_of(const Card& card) {
    if (!card.fabric_attached.value_or(false)) return "";
    return fmt::format("{}.{}", card.fabric_cluster_uuid, card.fabric_clique);
}

nlohmann::json to_json(const Cell& c) {
    return {{"peer", c.peer},
            {"status", status_name(c.status)},
            {"diagnosis", c.diagnosis},
            {"gbps", c.gbps ? nlohmann::json(*c.gbps) : nlohmann::json(nullptr)},
            {"seconds", c.seconds ? nlohmann::json(*c.seconds) : nlohmann::json(nullptr)},
            {"problem", c.problem ? ipc::problem_to_json(*c.problem) : nlohmann::json(nullptr)}};
}

nlohmann::json to_json(const Row& r) {
    nlohmann::json cells = nlohmann::json::array();
    for (const auto& c : r.cells) cells.push_back(to_json(c));
    return {{"format", kRowFormat}, {"format_version", kFormatVersion},
            {"run", r.run},         {"rank", r.rank},
            {"host", r.host},       {"cells", cells}};
}

Card card_from_json(const nlohmann::json& j) {
    StrictFields f(j, "the card");
    check_format(f, kCardFormat);
    Card c;
    c.run = f.text("run");
    c.ranks = static_cast<int>(f.integer("ranks", 1, kMaxRanks));
    c.rank = static_cast<int>(f.integer("rank", 0, c.ranks - 1));
    c.host = f.text("host");
    c.device = static_cast<int>(f.integer("device", 0, 1 << 20));
    c.gpu_uuid = f.text("gpu_uuid");
    c.size = f.unsigned_integer("size");
    c.handle_type = f.text("handle_type");
    c.handle = f.text("handle");
    c.seed = f.unsigned_integer("seed");
    c.version = f.text("version");
    c.driver_version = static_cast<int>(f.integer("driver_version", 0, 1 << 30));
    c.pid = static_cast<int>(f.integer("pid", 0, 1 << 30));
    c.error = f.problem_or_null("error");
    // The bus id and NVML's index: absent from the cards of an older cumemctl.
    if (j.contains("pci_bus_id")) {
        c.pci_bus_id = f.text("pci_bus_id");
        const auto& index = f.at("nvml_index");
        if (!index.is_null()) c.nvml_index = static_cast<unsigned>(f.integer("nvml_index", 0, 1 << 20));
    }
    // The NVLink domain: absent from the cards of an older cumemctl.
    if (j.contains("fabric_attached")) {
        const auto& attached = f.at("fabric_attached");
        if (!attached.is_null() && !attached.is_boolean()) invalid("the card's 'fabric_attached' is not a boolean");
        if (attached.is_boolean()) c.fabric_attached = attached.get<bool>();
        c.fabric_cluster_uuid = f.text("fabric_cluster_uuid");
        c.fabric_clique = static_cast<unsigned>(f.integer("fabric_clique", 0, 0xffffffffLL));
        if (c.fabric_attached.value_or(false) &&
            (c.fabric_cluster_uuid.size() != 36 ||
             c.fabric_cluster_uuid.find_first_not_of("0123456789abcdef-") != std::string::npos)) {
            invalid("the card's fabric cluster UUID is not 8-4-4-4-12 lowercase hex");
        }
    }
    f.done();
    if (c.handle_type != "fabric" && c.handle_type != "posix-fd") {
        invalid(fmt::format("the card's handle type '{}' is neither fabric nor posix-fd", c.handle_type));
    }
    if (!c.error) {
        if (c.size == 0 || c.size > kMaxMatrixSize) {
            invalid(fmt::format("the card's size {} is outside 1-{} bytes", c.size, kMaxMatrixSize));
        }
        if (c.handle_type == "fabric" && (c.handle.size() != 128 || !is_hex(c.handle))) {
            invalid("the card's fabric handle is not 128 lowercase hex digits");
        }
        if (c.handle_type == "posix-fd" && !c.handle.empty()) invalid("the card of a posix-fd handle holds a handle");
    }
    return c;
}

Card parse_card(std::string_view text) {
    return card_from_json(record_tree(text, "the card"));
}

Cell cell_from_json(const nlohmann::json& j, int ranks, std::size_t peer) {
    StrictFields c(j, fmt::format("the row's cell {}", peer));
    Cell cell;
    cell.peer = static_cast<int>(c.integer("peer", 0, ranks - 1));
    if (cell.peer != static_cast<int>(peer)) invalid(fmt::format("the row's cell {} names peer {}", peer, cell.peer));
    const std::string status = c.text("status");
    const std::optional<CheckStatus> parsed = parse_status(status);
    if (parsed != CheckStatus::pass && parsed != CheckStatus::fail) {
        invalid(fmt::format("the row's cell {} has status '{}'", peer, status));
    }
    cell.status = *parsed;
    cell.diagnosis = c.text("diagnosis");
    cell.gbps = c.number_or_null("gbps");
    cell.seconds = c.number_or_null("seconds");
    if (auto problem = c.problem_or_null("problem"))
        cell.problem = std::make_shared<const Problem>(std::move(*problem));
    c.done();
    return cell;
}

Row parse_row(std::string_view text, int ranks) {
    StrictFields f(text, "the row");
    check_format(f, kRowFormat);
    Row r;
    r.run = f.text("run");
    r.rank = static_cast<int>(f.integer("rank", 0, ranks - 1));
    r.host = f.text("host");
    for_each_item(
        f.list("cells"), "the row's cells", static_cast<std::size_t>(ranks), [&](std::string_view cell, std::size_t i) {
            r.cells.push_back(cell_from_json(field_tree(cell, fmt::format("the row's cell {}", i)), ranks, i));
        });
    if (r.cells.size() != static_cast<std::size_t>(ranks))
        invalid(fmt::format("the row's cells are not a list of {}", ranks));
    f.done();
    return r;
}

}  // namespace cumemctl::matrix
