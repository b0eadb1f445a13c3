// The fake driver's stream-ordered memory pools, shared by fake_pools.cpp (pools, attributes,
// allocation, thresholds, trim) and fake_pool_ipc.cpp (export and import across processes).
//
// A pool reserves device (or host) memory in slabs of whole granules carved from one memfd-backed
// arena, so that another process given the memfd can map the same pages. The arena is a file as large
// as the pool may grow (sparse: it costs nothing); only its slabs are mapped, each where it is carved,
// and an importer maps only the pointers it imports. (Mapping the whole arena, the device's size,
// cost 0.2 s a GiB under qemu-user, which keeps a table of every guest page: 30 s for an H200's.)
// Allocations reuse free slabs first; freed slabs stay reserved until a synchronisation releases
// what is above the pool's release threshold, or cuMemPoolTrimTo releases down to what it is asked
// to keep.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fake_memory.hpp"

namespace fake {

// A reserved piece of a pool's arena: whole granules, holding at most one allocation.
struct Slab {
    std::uint64_t size = 0;
    bool in_use = false;
    std::uintptr_t addr = 0;  // where it is mapped in this process
};

// A live allocation: its size as asked and the offset of the slab that holds it.
struct PoolBlock {
    std::uint64_t size = 0;
    std::uint64_t slab = 0;
    std::string import_mark{};  // an imported pointer: its mark in import_marks_dir(), removed when freed
};

// One pool of this process (its own, a default one, or one imported from another process).
struct Pool {
    CUmemoryPool handle = nullptr;
    CUmemPoolProps props{};
    int device = -1;  // whose free memory its reservations take; -1 for host memory
    bool is_default = false;
    bool imported = false;            // statistics, trim and allocation are refused, as the driver does
    bool exported = false;            // its handle was exported: only then may a block's pointer be
    bool destroyed = false;           // destroyed with allocations outstanding: goes with the last one
    AccessMask access = kAllDevices;  // devices that may read and write its blocks: its own device
                                      // (peers by cuMemPoolSetAccess), every one for host memory,
                                      // none for an import until the importer grants its device
    std::uint64_t granule = 2u << 20;
    std::uint64_t reserved = 0, reserved_high = 0, used = 0, used_high = 0;
    std::uint64_t threshold = 0;                   // CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
    int reuse[3] = {1, 1, 1};                      // the three reuse policies, in attribute order
    int memfd = -1;                                // the arena, made on first use
    std::uint64_t arena = 0;                       // its size
    std::uint64_t top = 0;                         // arena bytes carved so far
    std::map<std::uint64_t, std::uint64_t> holes;  // released arena ranges: offset -> size
    std::map<std::uint64_t, Slab> slabs;           // reserved slabs by offset
    std::map<std::uintptr_t, PoolBlock> blocks;    // allocations by address (imports: imported pointers)
};

// The pool for a handle that may still be used, or nullptr. Caller holds state().mutex.
Pool* find_pool(CUmemoryPool handle);

// Registers a new pool and returns it with its handle set. Caller holds state().mutex.
Pool& add_pool(Pool pool);

// Creates the pool's arena (its memfd) when it has none; false when that fails. Caller holds
// state().mutex.
bool ensure_arena(Pool& pool);

// Maps `size` bytes of the pool's arena from `offset` (a multiple of the page size) into this
// process: their address, or 0 when that fails.
std::uintptr_t map_arena(const Pool& pool, std::uint64_t offset, std::uint64_t size);

// Drops a pool that is destroyed and has no allocation left: unmaps and closes its arena and gives
// back what it reserved. Caller holds state().mutex.
void drop_if_done(Pool& pool);

// The pool holding an allocation (or an imported pointer) that starts at ptr, or nullptr. Caller holds
// state().mutex.
Pool* pool_of_block(std::uintptr_t ptr);

// The pool-IPC protocol across processes: every importer frees its imported pointers before the exporter
// frees the allocation. An import leaves a mark, a file named EXPORTER_PID-POOL-OFFSET-IMPORTER_PID in
// import_marks_dir() (FAKECUDA_IMPORT_MARKS, else /tmp/fakecuda-imports-UID), which its free removes;
// an exporter that frees a block while a living process's mark for it is there breaks the protocol:
// said on stderr ("fakecuda: protocol: ...") and, with FAKECUDA_CHECK_LEAKS=1, a leak at exit.
std::string import_marks_dir();
std::string import_mark_name(int exporter_pid, std::uintptr_t pool, std::uint64_t offset, int importer_pid);
// Checks the marks of `pool`'s block at `offset` as its exporter frees it (protocol_breaches, in
// fake_state.hpp, lists what it found for the leak check). Caller holds state().mutex.
void check_imports_before_free(std::uintptr_t pool, std::uint64_t offset);

}  // namespace fake
