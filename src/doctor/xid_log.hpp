// The NVIDIA driver's Xid events as the kernel logged them since boot, and what NVIDIA says the ones
// about memory and the GPU's presence mean (docs/xid.md gives the sources): the facts behind doctor's
// xid check.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cumemctl::doctor {

// One Xid line of the kernel's log: "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: ...".
struct XidEvent {
    std::string pci_bus_id;  // the GPU as nvidia-smi writes it (00000000:10:1C.0); as logged where it does not parse
    int xid = 0;
    std::optional<double> since_boot;  // seconds after boot the kernel stamped it with
    std::string text;                  // the rest of the line (pid, name, the driver's words)
};

// What the log held: its Xid lines and whether it reaches back to boot.
struct XidLog {
    std::vector<XidEvent> events;
    std::size_t records = 0;  // the log's records read
    bool from_boot = false;   // the first record is the boot's first (sequence 0): nothing was overwritten
};

// Parses records in /dev/kmsg's format ("PRIO,SEQ,USEC,FLAGS;MESSAGE", continuation lines that start
// with a blank skipped).
XidLog parse_kernel_log(std::string_view kmsg);

// Reads the kernel's log from `path` (/dev/kmsg, or a file that stands for it under a test's system
// root) without blocking: every record still in the ring buffer. Throws Error naming the path:
// permission (exit 4) where the kernel refuses (kernel.dmesg_restrict without CAP_SYSLOG), else
// unavailable (exit 3).
std::string read_kernel_log(const std::string& path);

// How doctor judges an Xid: hardware (fail: the GPU needs a reset, a drain or a return), attention
// (warn: corrected or contained, a reset at a convenient time), application (warn: usually the
// program's fault; the GPU stays usable).
enum class XidKind { hardware, attention, application };

// NVIDIA's meaning of one Xid and its action, in a line each.
struct XidMeaning {
    int xid;
    std::string_view meaning;
    XidKind kind;
    bool nvml_counted;  // NVML's ECC and row-remapping counters record it too: memory-health judges that state
    std::string_view action;
};

// The Xids the check judges (memory and the GPU's presence), in number order.
const std::vector<XidMeaning>& xid_catalogue();
// The meaning of `xid`, or nullptr where the check does not judge it.
const XidMeaning* xid_meaning(int xid);
// "hardware", "attention", "application".
std::string_view xid_kind_name(XidKind kind);

}  // namespace cumemctl::doctor
