#include "doctor/xid_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "base/enum_words.hpp"
#include "base/error.hpp"
#include "gpu/device/device_selector.hpp"
#include "imex/proc_line.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl::doctor {
namespace {

// The most read of the log: the kernel's ring buffer is at most a few MiB.
constexpr std::size_t kMaxLogBytes = 64u << 20;

std::optional<unsigned long long> number(std::string_view text) {
    unsigned long long v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return v;
}

// "0000:10:1c" (domain:bus:device, as the driver logs it) as nvidia-smi writes a bus id, through the
// one normaliser of bus ids with the function the driver leaves out (a GPU is function 0).
std::string logged_bus_id(std::string_view logged) {
    if (logged.rfind("PCI:", 0) == 0) logged.remove_prefix(4);
    const auto normal = gpu::normal_pci_bus_id(std::string(logged) + ".0");
    return normal ? *normal : std::string(logged);
}

// The Xid of one message, where it is one: "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, ...".
std::optional<XidEvent> xid_of(std::string_view message) {
    constexpr std::string_view kHead = "NVRM: Xid (";
    const std::size_t at = message.find(kHead);
    if (at == std::string_view::npos) return std::nullopt;
    message.remove_prefix(at + kHead.size());
    const std::size_t close = message.find("): ");
    if (close == std::string_view::npos) return std::nullopt;
    XidEvent e;
    e.pci_bus_id = logged_bus_id(message.substr(0, close));
    message.remove_prefix(close + 3);
    const std::size_t comma = message.find(',');
    const auto xid = number(message.substr(0, comma));
    if (!xid || *xid > 100000) return std::nullopt;
    e.xid = static_cast<int>(*xid);
    if (comma != std::string_view::npos) {
        message.remove_prefix(comma + 1);
        while (!message.empty() && message.front() == ' ') message.remove_prefix(1);
        e.text = std::string(message);
    }
    return e;
}

}  // namespace

XidLog parse_kernel_log(std::string_view kmsg) {
    XidLog log;
    bool first = true;
    imex::for_each_line(kmsg, [&](const imex::ProcLine& record) {
        // A record: "PRIO,SEQ,USEC,FLAGS[,...];MESSAGE"; a line that starts with a blank continues it.
        const std::string_view line = record.text;
        const std::size_t semi = line.find(';');
        if (line.empty() || line.front() == ' ' || semi == std::string_view::npos) return;
        const std::string_view head = line.substr(0, semi);
        const std::size_t c1 = head.find(',');
        const std::size_t c2 = c1 == std::string_view::npos ? c1 : head.find(',', c1 + 1);
        const std::size_t c3 = c2 == std::string_view::npos ? c2 : head.find(',', c2 + 1);
        if (c2 == std::string_view::npos) return;
        ++log.records;
        const auto seq = number(head.substr(c1 + 1, c2 - c1 - 1));
        if (first) log.from_boot = seq && *seq == 0;
        first = false;
        auto event = xid_of(line.substr(semi + 1));
        if (!event) return;
        if (const auto usec = number(head.substr(c2 + 1, c3 == std::string_view::npos ? c3 : c3 - c2 - 1))) {
            event->since_boot = static_cast<double>(*usec) / 1e6;
        }
        log.events.push_back(std::move(*event));
    });
    return log;
}

std::string read_kernel_log(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    const auto fail = [&](int err) {
        const bool denied = err == EACCES || err == EPERM;
        return Error(denied ? ExitCode::permission : ExitCode::unavailable,
                     fmt::format("cannot read the kernel's log {}: {}", path, std::strerror(err)),
                     denied ? "run doctor as root (or with CAP_SYSLOG): kernel.dmesg_restrict keeps the log from "
                              "other users"
                            : "a kernel without /dev/kmsg: read dmesg by hand (dmesg | grep Xid)");
    };
    if (!fd.valid()) throw fail(errno);
    std::string text;
    // /dev/kmsg gives one record a read and EAGAIN at the end (EPIPE where a record was overwritten
    // meanwhile: read on); a file standing for it ends with 0.
    char buffer[16384];
    while (text.size() < kMaxLogBytes) {
        const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
        if (n > 0) {
            text.append(buffer, static_cast<std::size_t>(n));
            if (text.back() != '\n') text.push_back('\n');
            continue;
        }
        if (n == 0 || errno == EAGAIN) break;
        if (errno == EINTR || errno == EPIPE) continue;
        throw fail(errno);
    }
    return text;
}

const std::vector<XidMeaning>& xid_catalogue() {
    // NVIDIA's Xid catalog (Ampere and newer) and its GPU debug guidelines, in this project's words;
    // docs/xid.md names the sources of each line.
    static const std::vector<XidMeaning> catalogue{
        {13, "graphics engine exception", XidKind::application, false,
         "restart the application; where it returns, check the program (compute-sanitizer)"},
        {31, "GPU memory page fault (an illegal address, usually the program's)", XidKind::application, false,
         "restart the application; where it returns, check the program (compute-sanitizer)"},
        {43, "GPU stopped processing: the application hit a fault of its own; the GPU goes on", XidKind::application,
         false, "none for the GPU; restart the application"},
        {48, "double-bit ECC error", XidKind::hardware, true,
         "drain the GPU's jobs and reset it (nvidia-smi -r, or reboot); if it returns, run NVIDIA's field diagnostic "
         "and return the GPU (RMA) with nvidia-bug-report.sh's log"},
        {63, "row remapping (page retirement) recorded: takes effect at the next reset", XidKind::attention, true,
         "reset the GPU at a convenient time (nvidia-smi -r, or reboot) so that the remap takes effect"},
        {64, "row remapping (page retirement) failed", XidKind::hardware, true,
         "drain the GPU's jobs and reset it; run NVIDIA's field diagnostic; a GPU whose remapping fails again needs "
         "returning (RMA) with nvidia-bug-report.sh's log"},
        {74, "NVLink error", XidKind::hardware, false,
         "drain the GPU's jobs and reset it; check its NVLinks (nvidia-smi nvlink -e); report it where it returns"},
        {79, "GPU has fallen off the bus", XidKind::hardware, false,
         "drain the node and reboot it (the GPU is gone until then); check the GPU's seating, power and cooling; "
         "report it with nvidia-bug-report.sh's log, and return it (RMA) where it falls off again"},
        {92, "high single-bit ECC error rate (corrected)", XidKind::attention, true,
         "run NVIDIA's field diagnostic when the node is free; return the GPU where it passes NVIDIA's thresholds"},
        {94, "contained ECC error: the application that met it was stopped, the others go on", XidKind::attention, true,
         "restart that application; reset the GPU at a convenient time so that its row remap takes effect"},
        {95, "uncontained ECC error", XidKind::hardware, true,
         "without MIG reboot the node now; with MIG drain the GPU's other instances and reset it; where it returns, "
         "drain it and return it (RMA) with nvidia-bug-report.sh's log"},
        {119, "GSP RPC timeout: the GPU's system processor did not answer", XidKind::hardware, false,
         "drain the GPU's jobs and reset it (or reboot the node); report it with nvidia-bug-report.sh's log where it "
         "returns"},
        {120, "GSP error", XidKind::hardware, false,
         "drain the GPU's jobs and reset it (or reboot the node); report it with nvidia-bug-report.sh's log where it "
         "returns"},
    };
    return catalogue;
}

const XidMeaning* xid_meaning(int xid) {
    for (const auto& m : xid_catalogue()) {
        if (m.xid == xid) return &m;
    }
    return nullptr;
}

namespace {

constexpr auto kXidKindWords = enum_words<XidKind>(
    {{XidKind::hardware, "hardware"}, {XidKind::attention, "attention"}, {XidKind::application, "application"}},
    "hardware");

}  // namespace

std::string_view xid_kind_name(XidKind kind) {
    return kXidKindWords.word(kind);
}

}  // namespace cumemctl::doctor
