#include "gpu/device/device_selector.hpp"
#include "util/comma_list.hpp"
#include "report/json_fields.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/setting.hpp"
#include "cuda/driver_call.hpp"
#include "gpu/device/devices.hpp"
#include "nvml/nvml.hpp"
#include "util/index_list.hpp"

namespace cumemctl::gpu {
namespace {

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string_view trimmed(std::string_view text) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    return text;
}

bool all_hex_or_dash(std::string_view text) {
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return c == '-' || std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

// The items of a list, each classified; throws a usage error on an item that names no GPU.
std::vector<DeviceItem> list_items(std::string_view spec) {
    std::vector<DeviceItem> items;
    for (const std::string_view piece : split_commas(spec)) {
        const std::string_view item = trimmed(piece);
        if (lower(item.substr(0, 6)) == "nvidia") {
            const std::string_view digits = item.substr(6);
            if (digits.empty() || digits.size() > 6 || !std::all_of(digits.begin(), digits.end(), [](char c) {
                    return std::isdigit(static_cast<unsigned char>(c)) != 0;
                })) {
                throw Error(ExitCode::usage, fmt::format("invalid device '{}': not nvidia and an index", item),
                            "nvidiaN names the GPU of nvidia-smi's index N (nvidia0, nvidia3), as doctor's one-line "
                            "summary names it");
            }
            // The index as a number writes it (nvidia03 is nvidia3).
            items.push_back(
                {DeviceItemKind::nvml_index, {}, std::to_string(std::stoul(std::string(digits))), std::string(item)});
        } else if (lower(item.substr(0, 4)) == "gpu-") {
            if (item.size() == 4 || !all_hex_or_dash(item.substr(4))) {
                throw Error(ExitCode::usage, fmt::format("invalid device '{}': not a GPU UUID", item),
                            "a UUID is GPU- and hexadecimal digits, as nvidia-smi -L prints it "
                            "(GPU-5f0a6b1c-2d3e-...), or the start of one");
            }
            items.push_back({DeviceItemKind::uuid, {}, lower(item), std::string(item)});
        } else if (item.find(':') != std::string_view::npos) {
            const auto bus = normal_pci_bus_id(item);
            if (!bus) {
                throw Error(ExitCode::usage, fmt::format("invalid device '{}': not a PCI bus id", item),
                            "a PCI bus id is [domain:]bus:device.function in hexadecimal, as nvidia-smi prints it "
                            "(00000000:3B:00.0 or 3b:00.0)");
            }
            items.push_back({DeviceItemKind::pci_bus_id, {}, *bus, std::string(item)});
        } else {
            const bool numeric = !item.empty() && std::all_of(item.begin(), item.end(), [](char c) {
                return c == '-' || std::isdigit(static_cast<unsigned char>(c)) != 0;
            });
            if (!item.empty() && !numeric) {
                throw Error(
                    ExitCode::usage,
                    fmt::format("invalid device '{}': not a number, a UUID (GPU-...), a PCI bus id or nvidiaN", item),
                    "give CUDA ordinals (0, 0,2, 0-3), UUIDs (GPU-...), PCI bus ids (00000000:3B:00.0) or "
                    "nvidia-smi's index as nvidiaN (nvidia3)");
            }
            items.push_back({DeviceItemKind::ordinals, {}, std::string(item), std::string(item)});
        }
    }
    return items;
}

// The visible devices, for a message: the one there is by name ("0 GPU-... 00000000:1B:00.0"), else
// how many and where to see them (a line of every UUID and bus id is hundreds of characters at 8 GPUs).
std::string visible_devices(const std::vector<DeviceIdentity>& ids) {
    if (ids.empty()) return "this node has no CUDA device";
    std::string text = ids.size() == 1
                           ? fmt::format("the one visible device is {} {} {}", ids.front().ordinal, ids.front().uuid,
                                         ids.front().pci_bus_id)
                           : fmt::format(
                                 "{} CUDA devices are visible; 'cumemctl devices' lists their UUIDs and PCI "
                                 "bus ids",
                                 ids.size());
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible != nullptr) {
        text += fmt::format(" (CUDA_VISIBLE_DEVICES={} hides the others)", visible);
    }
    return text;
}

// The ordinal that `item` (a UUID or its start, or a bus id) names among `ids`. Messages say a UUID as
// typed, a bus id as nvidia-smi writes it.
int find_device(const DeviceItem& item, const std::vector<DeviceIdentity>& ids) {
    const bool uuid = item.kind == DeviceItemKind::uuid;
    std::vector<int> found;
    for (const auto& id : ids) {
        bool match = false;
        switch (item.kind) {
            case DeviceItemKind::uuid:
                match = lower(id.uuid).rfind(item.text, 0) == 0;
                break;
            case DeviceItemKind::pci_bus_id:
                match = id.pci_bus_id == item.text;
                break;
            case DeviceItemKind::nvml_index:
                match = id.nvml_index && std::to_string(*id.nvml_index) == item.text;
                break;
            case DeviceItemKind::ordinals:
                break;
        }
        if (match) found.push_back(id.ordinal);
    }
    if (found.empty() && item.kind == DeviceItemKind::nvml_index) {
        throw Error(ExitCode::unavailable,
                    fmt::format("no CUDA device is {} (nvidia-smi's index {})", item.typed, item.text),
                    visible_devices(ids));
    }
    const std::string shown = uuid ? item.typed : item.text;
    if (found.empty()) {
        throw Error(ExitCode::unavailable, fmt::format("no CUDA device has {} {}", uuid ? "UUID" : "PCI bus id", shown),
                    visible_devices(ids));
    }
    if (found.size() > 1) {
        throw Error(ExitCode::usage, fmt::format("UUID prefix {} matches devices {}", shown, fmt::join(found, ", ")),
                    "give more of the UUID");
    }
    return found.front();
}

}  // namespace

std::optional<std::string> normal_pci_bus_id(std::string_view text) {
    // [domain:]bus:device.function, every part hexadecimal.
    const std::size_t dot = text.rfind('.');
    const std::size_t last = text.rfind(':');
    if (dot == std::string_view::npos || last == std::string_view::npos || dot < last) return std::nullopt;
    const std::size_t first = text.find(':');
    std::string_view domain = first == last ? std::string_view("0") : text.substr(0, first);
    const std::string_view bus = text.substr(first == last ? 0 : first + 1, last - (first == last ? 0 : first + 1));
    const std::string_view device = text.substr(last + 1, dot - last - 1);
    const std::string_view function = text.substr(dot + 1);
    auto number = [](std::string_view part, unsigned long limit) -> std::optional<unsigned long> {
        unsigned long value = 0;
        const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value, 16);
        if (part.empty() || ec != std::errc{} || ptr != part.data() + part.size() || value > limit) return std::nullopt;
        return value;
    };
    const auto d = number(domain, 0xffffffffUL);
    const auto b = number(bus, 0xff);
    const auto v = number(device, 0x1f);
    const auto f = number(function, 0x7);
    if (!d || !b || !v || !f) return std::nullopt;
    return fmt::format("{:08X}:{:02X}:{:02X}.{:X}", *d, *b, *v, *f);
}

DeviceIdentity device_identity(const DriverApi& api, int ordinal, const nvml::Library* nvml) {
    DeviceIdentity id;
    id.ordinal = ordinal;
    CUdevice dev = 0;
    if (api.cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS) return id;
    char name[256] = {};
    if (api.cuDeviceGetName(name, sizeof name, dev) == CUDA_SUCCESS) id.name = name;
    if (api.cuDeviceGetUuid != nullptr) {
        CUuuid uuid{};
        if (api.cuDeviceGetUuid(&uuid, dev) == CUDA_SUCCESS) id.uuid = format_uuid(uuid);
    }
    if (api.cuDeviceGetPCIBusId != nullptr) {
        char bus[32] = {};
        if (api.cuDeviceGetPCIBusId(bus, sizeof bus, dev) == CUDA_SUCCESS) {
            id.pci_bus_id = normal_pci_bus_id(bus).value_or(bus);
        }
    }
    if (nvml != nullptr && !id.uuid.empty()) {
        id.nvml_index = nvml->index_of(id.uuid);
        id.minor = nvml->minor_of(id.uuid);
    }
    return id;
}

nlohmann::json identity_json(const DeviceIdentity& id) {
    return {{"ordinal", id.ordinal},
            {"uuid", text_or_null(id.uuid)},
            {"pci_bus_id", text_or_null(id.pci_bus_id)},
            {"nvml_index", id.nvml_index ? nlohmann::json(*id.nvml_index) : nlohmann::json(nullptr)}};
}

std::vector<int> select_devices(const DeviceList& list, int count, const DriverApi* api, const nvml::Library* nvml) {
    if (list.all) return parse_index_list("all", count, "device");
    std::vector<int> wanted;
    std::vector<DeviceIdentity> ids;  // looked up once, for the first UUID or bus id
    for (const DeviceItem& listed : list.items) {
        if (listed.kind == DeviceItemKind::ordinals) {
            for (int d : listed.ordinals) {
                if (d >= count) {
                    throw Error(ExitCode::unavailable, fmt::format("device {} does not exist", d),
                                count == 0   ? "this node has no CUDA device"
                                : count == 1 ? "this node has one CUDA device: 0"
                                             : fmt::format("this node has {} CUDA devices: 0 to {}", count, count - 1));
                }
                wanted.push_back(d);
            }
            continue;
        }
        if (api == nullptr) throw Error(ExitCode::failed, "a device list with UUIDs or bus ids needs the driver");
        if (listed.kind == DeviceItemKind::nvml_index && (nvml == nullptr || !nvml->loaded())) {
            throw Error(ExitCode::unavailable,
                        fmt::format("{} names a GPU by nvidia-smi's index, which only NVML knows, and NVML is not "
                                    "loaded here",
                                    listed.typed),
                        fmt::format("give the GPU's UUID or PCI bus id (nvidia-smi -L lists them; 'cumemctl devices' "
                                    "shows each GPU's CUDA ordinal beside them), or load NVML (libnvidia-ml.so.1, {})",
                                    setting_name(Setting::libnvml)));
        }
        if (ids.empty()) {
            for (int i = 0; i < count; ++i) ids.push_back(device_identity(*api, i, nvml));
        }
        wanted.push_back(find_device(listed, ids));
    }
    std::sort(wanted.begin(), wanted.end());
    wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
    return wanted;
}

std::vector<int> DeviceList::select(const DriverApi& api, int count, const nvml::Library* nvml) const {
    return select_devices(*this, count, &api, nvml);
}

bool DeviceList::names_one() const {
    if (all || items.size() != 1) return false;
    return items.front().kind != DeviceItemKind::ordinals || items.front().ordinals.size() == 1;
}

std::optional<int> DeviceList::ordinal() const {
    if (!names_one() || items.front().kind != DeviceItemKind::ordinals) return std::nullopt;
    return items.front().ordinals.front();
}

DeviceList parse_device_list(std::string_view spec) {
    DeviceList list;
    list.spec = std::string(spec);
    list.all = trimmed(spec) == "all";
    if (list.all) return list;
    list.items = list_items(spec);
    // The ordinals after every item is classified (a list with two mistakes names the same one as
    // before), against an unlimited count, so that a device that does not exist is told apart (by
    // select, once the count is known) from text that is not a device list.
    for (DeviceItem& item : list.items) {
        if (item.kind == DeviceItemKind::ordinals)
            item.ordinals = parse_index_list(item.text, 1 << 20, "device", false);
    }
    return list;
}

}  // namespace cumemctl::gpu
