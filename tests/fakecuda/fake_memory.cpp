// Memory accounting and the registry of allocations and linear blocks, shared by the fake's files.
#include "fake_memory.hpp"

#include <algorithm>

#include "fake_locality.hpp"

namespace fake {
namespace {

// One linear block: its size, the devices that may access it, and whose memory it is (-1: host).
struct LinearBlock {
    std::size_t size = 0;
    AccessMask access = 0;
    int owner = -1;
};

// Linear blocks by start.
std::map<std::uintptr_t, LinearBlock>& linear_blocks() {
    static auto* blocks = new std::map<std::uintptr_t, LinearBlock>;
    return *blocks;
}

int flag_index(const CUmemAllocationProp& prop, int which) {
    switch (which) {
        case 1:
            return prop.allocFlags.compressionType == CU_MEM_ALLOCATION_COMP_GENERIC ? 1 : 0;
        case 2:
            return prop.allocFlags.gpuDirectRDMACapable != 0 ? 2 : 0;
        case 3:
            return (prop.allocFlags.usage & CU_MEM_CREATE_USAGE_TILE_POOL) != 0 ? 3 : 0;
        default:
            return 0;
    }
}

const GranularityRow* find_row(const Device& d, const CUmemAllocationProp& prop, int flag) {
    const int id = prop.location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA ? prop.location.id : 0;
    for (const auto& row : d.granularity) {
        if (row.loc == static_cast<int>(prop.location.type) && row.id == id &&
            row.handle_types == static_cast<int>(prop.requestedHandleTypes) && row.flag == flag) {
            return &row;
        }
    }
    return nullptr;
}

}  // namespace

bool take_device_memory(int device, std::uint64_t bytes) {
    Device* d = fake::device(device);
    if (d == nullptr) return true;  // host memory is not counted
    if (d->total - d->used < bytes) return false;
    d->used += bytes;
    return true;
}

void give_device_memory(int device, std::uint64_t bytes) {
    Device* d = fake::device(device);
    if (d != nullptr) d->used -= std::min(d->used, bytes);
}

void add_linear_block(CUdeviceptr ptr, std::size_t size, AccessMask accessible, int owner) {
    linear_blocks()[static_cast<std::uintptr_t>(ptr)] = {size, accessible, owner};
}

std::size_t remove_linear_block(CUdeviceptr ptr) {
    auto& blocks = linear_blocks();
    const auto it = blocks.find(static_cast<std::uintptr_t>(ptr));
    if (it == blocks.end()) return 0;
    const std::size_t size = it->second.size;
    blocks.erase(it);
    return size;
}

bool valid_linear_range(std::uintptr_t p, std::size_t size, int device) {
    auto& blocks = linear_blocks();
    auto it = blocks.upper_bound(p);
    if (it == blocks.begin()) return false;
    --it;
    const AccessMask wanted = device < 0 ? kAllDevices : device_bit(device);
    return (it->second.access & wanted) != 0 && p >= it->first && p + size <= it->first + it->second.size;
}

Span linear_span(std::uintptr_t p, std::size_t size, int& owner) {
    auto& blocks = linear_blocks();
    auto it = blocks.upper_bound(p);
    if (it == blocks.begin()) return Span::none;
    --it;
    if (p >= it->first + it->second.size) return Span::none;
    owner = it->second.owner;
    return p + size <= it->first + it->second.size ? Span::inside : Span::overruns;
}

bool can_access_peer(int from, int owner) {
    const Device* d = fake::device(from);
    if (d == nullptr || fake::device(owner) == nullptr || from == owner) return false;
    const auto peers = d->extra.find("peers");
    if (peers == d->extra.end() || !peers->is_array()) return false;
    for (const auto& p : *peers) {
        if (p.is_number_integer() && p.get<int>() == owner) return true;
    }
    return false;
}

CUresult granularity_for(const CUmemAllocationProp& given, std::uint64_t& min, std::uint64_t& rec) {
    // A localized location has the granularity of its device's memory: even a 13.0 driver answers it
    // (2 MiB on the H200) and then refuses cuMemCreate.
    CUmemAllocationProp prop = given;
    if (is_localized(prop.location)) prop.location = {CU_MEM_LOCATION_TYPE_DEVICE, location_device(prop.location)};
    const Device* d = fake::device(checked_device(prop.location));
    if (d == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    min = rec = 0;
    bool any_flag = false;
    for (int which = 1; which <= 3; ++which) {
        const int flag = flag_index(prop, which);
        if (flag == 0) continue;
        any_flag = true;
        const GranularityRow* row = find_row(*d, prop, flag);
        if (row == nullptr) return CUDA_ERROR_INVALID_VALUE;
        if (row->result != CUDA_SUCCESS) return row->result;
        min = std::max(min, row->min);
        rec = std::max(rec, row->rec);
    }
    if (!any_flag) {
        const GranularityRow* row = find_row(*d, prop, 0);
        if (row == nullptr) return CUDA_ERROR_INVALID_VALUE;
        if (row->result != CUDA_SUCCESS) return row->result;
        min = row->min;
        rec = row->rec;
    }
    return CUDA_SUCCESS;
}

}  // namespace fake
