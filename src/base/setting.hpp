// What a core text may ask a person to change, typed. The core never spells a command-line flag: it
// names a setting with setting_name, which gives the flag of the command that runs (cmd's one table,
// cmd/option_names.cpp, installs them) or, where that command has none, the core's own words.
#pragma once

#include <map>
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
    last = bandwidth_fail,  // (the last setting, for the table of their words)
};

// The core's own words for a setting (what a reader without options gets): "the driver library path".
std::string_view setting_words(Setting setting);

// How this process's texts name a setting: the flag installed for it, else setting_words.
std::string setting_name(Setting setting);

// Installs the flags of the command that runs, replacing any installed before: called once, before the
// run and its threads start (cmd/option_names.hpp); the settings it leaves out keep the core's words.
void install_setting_names(std::map<Setting, std::string> names);

}  // namespace cumemctl
