// The calling thread bound to a host NUMA node while it lives: its CPUs (sched_setaffinity) and its
// memory policy (set_mempolicy, MPOL_PREFERRED: pages from the node while it has them), through the
// system calls themselves (libc only, no libnuma). Both are put back as they were when it ends, so a
// thread may measure one GPU after another, each from its own node.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cumemctl {

class ThreadBinding {
public:
    // Binds the calling thread to `cpus` (left alone where empty) and prefers `node`'s memory (left
    // alone where absent). Never throws: what the kernel refused is in error().
    ThreadBinding(const std::vector<int>& cpus, std::optional<int> node);
    ~ThreadBinding();
    ThreadBinding(const ThreadBinding&) = delete;
    ThreadBinding& operator=(const ThreadBinding&) = delete;

    bool cpus_bound() const { return cpus_bound_; }
    bool memory_bound() const { return memory_bound_; }
    // What the kernel refused ("sched_setaffinity to CPUs 16-31: Invalid argument"), empty where nothing.
    const std::string& error() const { return error_; }

private:
    bool cpus_bound_ = false, memory_bound_ = false;
    std::vector<unsigned long> old_cpus_;
    int old_mode_ = 0;
    std::vector<unsigned long> old_nodes_;
    std::string error_;
};

// The CPUs of host NUMA node `node` (/sys/devices/system/node/nodeN/cpulist under `sysroot`), empty
// where the file cannot be read.
std::vector<int> node_cpus(const std::string& sysroot, int node);

}  // namespace cumemctl
