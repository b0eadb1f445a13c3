#include "csv_fields.hpp"
#include "util/comma_list.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "bandwidth_results.hpp"
#include "base/error.hpp"
#include "devices_results.hpp"
#include "doctor/doctor_results.hpp"
#include "util/suggest.hpp"

namespace cumemctl::cmd {
namespace {

// The items between commas, blanks around each dropped ("uuid, total").
std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    for (const std::string_view piece : split_commas(text)) {
        std::string item(piece);
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        out.push_back(item);
    }
    return out;
}

// The fields a command's CSV shows when --fields is not given.
struct CsvCommand {
    std::vector<std::string> defaults;
};

const CsvCommand* csv_command(const std::string& command) {
    static const CsvCommand devices{{"ordinal", "nvml_index", "uuid", "pci_bus_id", "name", "total", "free"}};
    static const CsvCommand doctor{{"check", "device", "uuid", "status", "reason"}};
    static const CsvCommand bandwidth{
        {"device", "uuid", "path", "memory", "gbps", "count", "limit_gbps", "ratio", "concurrent"}};
    if (command == "devices") return &devices;
    if (command == "doctor") return &doctor;
    if (command == "bandwidth") return &bandwidth;
    return nullptr;
}

// The fields of `command`'s rows: each as --json names it, and a figure in bytes (total_bytes) also
// without its unit's suffix in MiB (total), as nvidia-smi writes memory.total; seconds in seconds.
std::vector<CsvField> field_catalogue(const std::string& command) {
    std::vector<std::string> json_names;
    if (command == "devices") {
        json_names = DevicesResults::csv_columns();
    } else if (command == "doctor") {
        json_names = doctor::DoctorResults::csv_columns();
    } else if (command == "bandwidth") {
        json_names = BandwidthResults::csv_columns();
    }
    std::vector<CsvField> fields;
    constexpr std::string_view kBytes = "_bytes";
    for (std::size_t column = 0; column < json_names.size(); ++column) {
        const std::string& name = json_names[column];
        const bool bytes = name.size() > kBytes.size() && name.ends_with(kBytes);
        if (bytes) fields.push_back({name.substr(0, name.size() - kBytes.size()), column, CsvUnit::mebibytes});
        fields.push_back({name, column, name == "seconds" ? CsvUnit::seconds : CsvUnit::none});
    }
    return fields;
}

}  // namespace

std::vector<std::string> csv_fields(const std::string& command) {
    std::vector<std::string> names;
    for (const CsvField& f : field_catalogue(command)) names.push_back(f.name);
    return names;
}

CsvLayout csv_layout(const std::string& command, const std::string& format, const std::string& fields) {
    const CsvCommand* c = csv_command(command);
    if (c == nullptr) {
        throw Error(ExitCode::usage, fmt::format("'{}' has no CSV output", command),
                    "--format csv works with devices, doctor and bandwidth; use --json here");
    }
    const std::vector<CsvField> catalogue = field_catalogue(command);
    auto field = [&](const std::string& name) {
        return std::find_if(catalogue.begin(), catalogue.end(), [&](const CsvField& f) { return f.name == name; });
    };
    CsvLayout layout{{}, true, true};
    for (const auto& name : c->defaults) layout.fields.push_back(*field(name));
    const auto flags = split_list(format);
    for (std::size_t i = 1; i < flags.size(); ++i) {
        if (flags[i] == "noheader") {
            layout.header = false;
        } else if (flags[i] == "nounits") {
            layout.units = false;
        } else {
            throw Error(ExitCode::usage,
                        fmt::format("invalid --format '{}': '{}' is no CSV flag{}", format, flags[i],
                                    did_you_mean(flags[i], {"noheader", "nounits"})),
                        "give csv, csv,noheader, csv,nounits or csv,noheader,nounits");
        }
    }
    if (fields.empty()) return layout;
    layout.fields.clear();
    for (const auto& f : split_list(fields)) {
        const auto found = field(f);
        if (found == catalogue.end()) {
            const auto known = csv_fields(command);
            throw Error(ExitCode::usage, fmt::format("unknown field '{}' of {}{}", f, command, did_you_mean(f, known)),
                        fmt::format("the fields: {}", fmt::join(known, ", ")));
        }
        layout.fields.push_back(*found);
    }
    return layout;
}

}  // namespace cumemctl::cmd
