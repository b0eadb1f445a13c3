// What a core text may ask a person to change or to run, typed. The core never spells a command-line
// flag: it names a setting (setting_name) or a command line (command_line), and the program that links
// the core words them from its table of flags (cumemctl: cmd/setting_flags.cpp), or, where a command has
// no flag for a setting, the core's own words.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace cumemctl {

// A setting of a request that a message, cause or remedy may name.
enum class Setting {
    libcuda,               // the driver library to load
    libnvml,               // the NVML library to load
    libpmix,               // the PMIx library to load
    location,              // where memory lives (device, host, host-numa:N, domain:N)
    quick,                 // doctor's checks that need no context
    rank,                  // this process's rank of a run
    ranks,                 // how many ranks a run has
    rendezvous,            // how the ranks of a run meet (dir, pmix)
    rendezvous_dir,        // the folder in which they meet
    pool_max_size,         // the most a new pool may reserve
    access,                // the devices given access to an allocation
    endpoint_size,         // a logical endpoint's bytes bindable per device (CUlogicalEndpointProp.size)
    endpoint_offset,       // where in a logical endpoint a binding starts
    mem_offset,            // where in the bound allocation a binding starts
    bind_size,             // the bytes a binding covers
    handle_type,           // a logical endpoint's handle type: none or fabric (exportable endpoint and memory)
    counted_ops,           // a logical endpoint with counted operations (CU_LOGICAL_ENDPOINT_FLAG_COUNTED_OPS)
    by_address,            // binding a mapped address (cuLogicalEndpointBindAddr) rather than a handle
    limits_only,           // asking a logical endpoint's limits and changing nothing
    construction_timeout,  // how long to wait for a logical endpoint's construction
    endpoint_devices,      // a logical endpoint's owner device (unicast) or team (multicast)
    proc_devices,          // the file read as /proc/devices
    params_file,           // the file read as the NVIDIA driver's params file
    dev_root,              // the folder that holds dev/ (IMEX channel nodes go under it)
    channel_owner,         // the user and group given the IMEX channels
    channel_mode,          // the mode given the IMEX channels
    replace_nodes,         // replacing (or removing) device nodes of the wrong type or number
    check_only,            // changing nothing, failing where anything differs
    dry_run,               // changing nothing, saying what would change
    round_up,              // a size rounded up to the allocation granularity rather than refused
    keep,                  // the bytes a pool trim keeps reserved
    exercise,              // the workload run on a pool before it is trimmed or read
    test_size,             // the bytes memtest tests
    chunk,                 // the size of each allocation memtest makes
    start_anyway,          // starting memtest on a GPU that other processes hold
    bandwidth_warn,        // the fraction of a path's limit below which its bandwidth warns
    bandwidth_fail,        // the fraction of a path's limit below which its bandwidth fails
    json,                  // one JSON document on stdout
    device,                // the device a command uses
    expect_gpus,           // the number of GPUs a node must have
    expect_driver,         // the driver version a node must have
    expect_idle,           // a GPU that other processes hold failing rather than skipped
    list_checks,           // listing doctor's checks rather than running them
    channel,               // one IMEX channel's number
    verify,                // checking what was made with a real allocation
    map,                   // mapping an allocation into this process
    last = map,            // (the last setting, for the table of their words)
};

// A command of cumemctl's: the one that runs, or one that a text tells a person to run.
enum class Command {
    doctor,
    devices,
    imex_setup,
    le_bind,
    granularity,
    create,
    pool_stats,
    trim,
    fleet,
    fabric_matrix,
    memtest,
    bandwidth,
    completion,
    importer,     // the second process of the IPC checks
    imex_verify,  // the second process of imex-setup --verify
    matrix_rank,  // one rank of fabric-matrix --local
    last = matrix_rank,
};

// A command's name as typed after "cumemctl": "imex-setup", "__importer".
std::string_view command_name(Command command);

// A setting given on a command line, and its value ("" for a flag that takes none).
struct Argument {
    Setting setting;
    std::string_view value = {};
};

// The core's own words for a setting (what a reader without options gets): "the driver library path".
std::string_view setting_words(Setting setting);

// A command line for a text to show, after "cumemctl ": command_line(Command::imex_setup,
// {{Setting::channel, "3"}, {Setting::check_only}}) is "imex-setup --channel 3 --check".
std::string command_line(Command command, std::initializer_list<Argument> arguments = {});

// Defined by the program that links the core, from its one table of flags (cumemctl:
// cmd/setting_flags.cpp):

// How `command` spells `setting` ("--quick"), or setting_words where it has no flag for it.
std::string command_flag(Command command, Setting setting);

// How this process's texts name a setting: the running command's flag for it, else setting_words (also
// before a command runs).
std::string setting_name(Setting setting);

}  // namespace cumemctl
