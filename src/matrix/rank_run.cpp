#include "matrix/rank_run.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "nvml/fabric_info.hpp"
#include "gpu/device/device_selector.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/device/granularity.hpp"
#include "gpu/device/held_device.hpp"
#include "gpu/device/memory_props.hpp"
#include "gpu/device/primary_context.hpp"
#include "gpu/diagnosis/diagnosis.hpp"
#include "gpu/verify/verify.hpp"
#include "gpu/vmm/device_mapping.hpp"
#include "gpu/vmm/shareable_handle.hpp"
#include "ipc/hex.hpp"
#include "matrix/pair_diagnosis.hpp"
#include "matrix/rendezvous.hpp"
#include "steps/step_log.hpp"
#include "util/host.hpp"
#include "util/size.hpp"
#include "util/stopwatch.hpp"
#include "util/version.hpp"
#include "base/scope_exit.hpp"

namespace cumemctl::matrix {
using namespace gpu;
namespace {

// This rank's own memory, held until every row is in.
struct OwnMemory {
    Granularity granularity;
    std::uint64_t size = 0;
    std::uint64_t seed = 0;
    AllocationHandle handle;
    std::optional<DeviceMapping> mapping;  // declared after the handle: unmapped first
    std::optional<ExportedHandle> exported;
};

// The card's NVLink domain, from NVML's fabric info of the card's GPU (found by UUID).
void fill_fabric_domain(const nvml::Library* nvml, Card& card) {
    if (nvml == nullptr || card.gpu_uuid.empty()) return;
    const auto device = nvml->device_by_uuid(card.gpu_uuid);
    if (!device) return;
    const nvml::FabricInfo fabric = nvml::query_fabric_info(*nvml, *device);
    if (!nvml::fabric_answered(fabric)) return;
    card.fabric_attached = nvml::fabric_attached(fabric);
    if (*card.fabric_attached) {
        card.fabric_cluster_uuid = nvml::cluster_uuid_text(fabric);
        card.fabric_clique = fabric.clique_id;
    }
}

}  // namespace

void require_handle_support(const DriverApi& api, int device, CUmemAllocationHandleType type) {
    const bool fabric = type == CU_MEM_HANDLE_TYPE_FABRIC;
    const char* name = fabric ? "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED"
                              : "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED";
    const auto value = device_attribute(api, device,
                                        fabric ? CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED
                                               : CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED);
    if (value && *value == 0) {
        throw Error(Problem{
            .exit_code = ExitCode::unavailable,
            .message = fmt::format("device {} has no {} handles", device, fabric ? "fabric" : "posix-fd"),
            .cause = fmt::format("{} = 0 on device {}", name, device),
            .remedy = fabric ? "fabric handles need a GPU and driver with fabric support (Hopper or later, CUDA 12.3 "
                               "or later); within one node, posix-fd handles check the same path"
                             : "posix-fd handles need a Linux driver that supports them",
            .device = device});
    }
}

namespace {

// Makes, maps, fills and exports this rank's memory.
void make_own(const DriverApi& api, const RankRequest& request, DiagnosisContext& context, OwnMemory& own,
              StepLog& log) {
    const int device = request.id.device;
    log.time("support", "cuDeviceGetAttribute", [&] { require_handle_support(api, device, request.handle_type); });
    MemoryRequest memory;
    memory.handle_type = request.handle_type;
    const CUmemAllocationProp prop = allocation_prop(api, memory, device);
    context.prop = prop;
    own.granularity =
        log.time("granularity", "cuMemGetAllocationGranularity", [&] { return allocation_granularity(api, prop); });
    context.granularity = own.granularity.minimum;
    own.size = request.size == 0 ? own.granularity.recommended : round_up(request.size, own.granularity.minimum);
    context.size = own.size;
    own.handle = log.time("create", "cuMemCreate", [&] {
        CUmemGenericAllocationHandle h = 0;
        CU_CALL(api, cuMemCreate, &h, own.size, &prop, 0);
        return AllocationHandle(api, h);
    });
    own.mapping.emplace(api, own.handle.get(), own.size, own.granularity.minimum, std::vector<int>{device}, log);
    own.seed = random_pattern_seed();
    log.time("fill", "fill_pattern", [&] { return fill_pattern(api, own.mapping->address(), own.size, own.seed); });
    own.exported = log.time("export", "cuMemExportToShareableHandle",
                            [&] { return export_handle(api, own.handle.get(), request.handle_type); });
}

// Takes rank r's card as read from the folder: kept when valid and its own, else refused with the reason.
void take_card(int r, const FileRead& f, const RankIdentity& id, RankResult& result) {
    if (!f.usable()) {
        result.refused[r] = fmt::format("its card {}", f.refusal);
        return;
    }
    try {
        Card card = parse_card(f.content);
        if (card.run != id.run || card.rank != r || card.ranks != id.ranks) {
            throw Error(ExitCode::failed, fmt::format("it names run '{}', rank {} of {}, not run '{}', rank {} of {}",
                                                      card.run, card.rank, card.ranks, id.run, r, id.ranks));
        }
        result.cards[r] = std::move(card);
    } catch (const Error& e) {
        result.refused[r] = fmt::format("its card is not valid: {}", e.what());
    }
}

// Takes rank r's row as read from the folder, the same way.
void take_row(int r, const FileRead& f, const RankIdentity& id, RankResult& result) {
    if (!f.usable()) {
        result.refused[r] = fmt::format("its row {}", f.refusal);
        return;
    }
    try {
        Row row = parse_row(f.content, id.ranks);
        if (row.run != id.run || row.rank != r) {
            throw Error(ExitCode::failed, fmt::format("it names run '{}', rank {}", row.run, row.rank));
        }
        result.rows[r] = std::move(row);
    } catch (const Error& e) {
        result.refused[r] = fmt::format("its row is not valid: {}", e.what());
    }
}

// Imports, maps, checks and releases one peer's memory: the cell. A failure of any step is the cell's.
Cell read_peer(const DriverApi& api, const RankRequest& request, const OwnMemory& own, const Card& mine,
               const Card& peer, const std::map<int, UniqueFd>& fds, StepLog& main_log) {
    Cell cell;
    cell.peer = peer.rank;
    if (auto refusal = refuse_pair(mine, peer, own.granularity.minimum)) return *refusal;
    DiagnosisContext context;
    context.device = request.id.device;
    context.handle_type = request.handle_type;
    context.size = peer.size;
    context.imex_channel_dir = request.imex_channel_dir;
    StepLog log(
        api, [&](Problem& p) { diagnose_problem(api, p, context); },
        fmt::format("rank {} reads rank {}", mine.rank, peer.rank));
    try {
        AllocationHandle handle = log.time("import", "cuMemImportFromShareableHandle", [&] {
            if (request.handle_type == CU_MEM_HANDLE_TYPE_FABRIC) {
                CUmemFabricHandle fabric{};
                ipc::from_hex(peer.handle, fabric.data, sizeof fabric.data);
                return import_fabric(api, fabric);
            }
            const auto it = fds.find(peer.rank);
            if (it == fds.end()) {
                throw Error(ExitCode::failed,
                            fmt::format("no descriptor of rank {} arrived from the coordinator", peer.rank));
            }
            return import_posix_fd(api, it->second.get());
        });
        DeviceMapping mapping(api, handle.get(), peer.size, own.granularity.minimum, {request.id.device}, log);
        const VerifyResult v = log.time("check", "check_pattern",
                                        [&] { return check_pattern(api, mapping.address(), peer.size, peer.seed); });
        mapping.release(log);
        log.time("release", "cuMemRelease", [&] { handle.release(); });
        cell = checked_cell(mine, peer, v);
    } catch (const Error& e) {
        cell = failed_cell(mine, peer, e.problem(), request.handle_type == CU_MEM_HANDLE_TYPE_FABRIC);
    }
    main_log.append(log.steps());
    return cell;
}

// The rank's own cell: its pattern read back by its own device.
Cell own_cell(const DriverApi& api, const OwnMemory& own, const Card& mine, StepLog& log) {
    try {
        const VerifyResult v = log.time("check-own", "check_pattern",
                                        [&] { return check_pattern(api, own.mapping->address(), own.size, own.seed); });
        return checked_cell(mine, mine, v);
    } catch (const Error& e) {
        return failed_cell(mine, mine, e.problem(), false);
    }
}

// The row: a cell per rank.
void fill_row(const DriverApi& api, const RankRequest& request, const OwnMemory* own,
              const std::map<int, UniqueFd>& fds, RankResult& result, StepLog& log) {
    result.row.run = request.id.run;
    result.row.rank = request.id.rank;
    result.row.host = result.card.host;
    for (int j = 0; j < request.id.ranks; ++j) {
        if (result.problem) {
            result.row.cells.push_back(own_failure_cell(j, *result.problem));
        } else if (j == request.id.rank) {
            result.row.cells.push_back(own_cell(api, *own, result.card, log));
        } else if (const auto bad = result.refused.find(j); bad != result.refused.end()) {
            result.row.cells.push_back(refused_file_cell(j, bad->second));
        } else if (const auto card = result.cards.find(j); card != result.cards.end()) {
            result.row.cells.push_back(read_peer(api, request, *own, result.card, card->second, fds, log));
        } else {
            result.row.cells.push_back(missing_cell(j, request.timeout));
        }
    }
}

// Publishes a record; a failure becomes the rank's problem (the first one kept) and false.
bool publish(Rendezvous& rv, RecordKind kind, const RankRequest& request, const std::string& content, StepLog& log,
             std::optional<Problem>& problem) {
    try {
        rv.publish(kind, request, content, log);
        return true;
    } catch (const Error& e) {
        if (!problem) problem = e.problem();
        return false;
    }
}

// This rank's memory, made and exported, and its card; no memory where it could not be made (the card
// says why).
std::optional<OwnMemory> own_card(const DriverApi& api, const RankRequest& request, RankResult& result, StepLog& log,
                                  DiagnosisContext& context) {
    std::optional<OwnMemory> own;
    try {
        if (result.problem) throw Error(*result.problem);
        own.emplace();
        make_own(api, request, context, *own, log);
        result.card.size = own->size;
        result.card.seed = own->seed;
        if (request.handle_type == CU_MEM_HANDLE_TYPE_FABRIC) result.card.handle = own->exported->fabric_hex();
    } catch (const Error& e) {
        result.problem = e.problem();
        own.reset();
    }
    result.card.error = result.problem;
    return own;
}

// The other ranks' descriptors, where the ranks pass them on a socket (one host); this rank's offered.
std::map<int, UniqueFd> exchange_descriptors(const RankRequest& request, const OwnMemory* own, RankResult& result,
                                             StepLog& log) {
    std::map<int, UniqueFd> fds;
    if (request.exchange == nullptr) return fds;
    try {
        request.exchange->offer(request.id.rank, own != nullptr ? own->exported->fd.get() : -1, result.problem);
        fds = log.time("descriptors", "recvmsg",
                       [&] { return request.exchange->collect(request.id.ranks, request.timeout); });
    } catch (const Error& e) {
        if (!result.problem) result.problem = e.problem();
    }
    return fds;
}

// The ranks a map holds, but `rank`.
template <class Map>
std::set<int> ranks_but(const Map& by_rank, int rank) {
    std::set<int> ranks;
    for (const auto& entry : by_rank) {
        if (entry.first != rank) ranks.insert(entry.first);
    }
    return ranks;
}

// Everything after the context: the phases of the run.
void rank_phases(const DriverApi& api, Rendezvous& rv, const RankRequest& request, RankResult& result, StepLog& log,
                 DiagnosisContext& context) {
    const std::string& run = request.id.run;
    std::optional<OwnMemory> own = own_card(api, request, result, log, context);
    if (!publish(rv, RecordKind::card, request, to_json(result.card).dump(), log, result.problem)) {
        // The name is taken (another run of the same name, or a stray file): this rank takes no part.
        result.row = Row{run, request.id.rank, result.card.host, {}};
        for (int j = 0; j < request.id.ranks; ++j) result.row.cells.push_back(own_failure_cell(j, *result.problem));
        return;
    }
    if (result.problem) own.reset();
    std::map<int, UniqueFd> fds = exchange_descriptors(request, own ? &*own : nullptr, result, log);
    result.cards[request.id.rank] = result.card;
    std::set<int> others;
    for (int r = 0; r < request.id.ranks; ++r) {
        if (r != request.id.rank) others.insert(r);
    }
    result.missing_cards = rv.collect(
        RecordKind::card, request, others, [&](int r, const FileRead& f) { take_card(r, f, request.id, result); }, log);
    fill_row(api, request, own ? &*own : nullptr, fds, result, log);
    fds.clear();
    publish(rv, RecordKind::row, request, to_json(result.row).dump(), log, result.problem);
    result.rows[request.id.rank] = result.row;
    rv.collect(
        RecordKind::row, request, ranks_but(result.cards, request.id.rank),
        [&](int r, const FileRead& f) { take_row(r, f, request.id, result); }, log);
    if (own) {
        own->mapping->release(log);
        log.time("release", "cuMemRelease", [&] { own->handle.release(); });
        own.reset();
    }
    if (!request.keep) rv.finish(request, ranks_but(result.rows, request.id.rank), result.warnings, log);
}

}  // namespace

void run_rank(const DriverApi& api, Rendezvous& rv, const RankRequest& request, RankResult& result) {
    result.card.run = request.id.run;
    result.card.rank = request.id.rank;
    result.card.ranks = request.id.ranks;
    result.card.host = host_name();
    result.card.device = request.id.device;
    result.card.handle_type = handle_type_name(request.handle_type);
    result.card.version = std::string(tool_version());
    result.card.driver_version = request.driver_version;
    result.card.pid = static_cast<int>(getpid());
    DiagnosisContext context;
    context.device = request.id.device;
    context.handle_type = request.handle_type;
    context.imex_channel_dir = request.imex_channel_dir;
    StepLog log(
        api, [&](Problem& p) { diagnose_problem(api, p, context); }, fmt::format("rank {}", request.id.rank));
    const ScopeExit keep_steps([&] { result.steps = log.steps(); });
    try {
        std::optional<PrimaryContext> ctx;
        try {
            log.time("context", "cuDevicePrimaryCtxRetain", [&] { ctx.emplace(api, request.id.device); });
            const DeviceIdentity id = device_identity(api, request.id.device, request.nvml);
            result.card.gpu_uuid = id.uuid;
            result.card.pci_bus_id = id.pci_bus_id;
            result.card.nvml_index = id.nvml_index;
            fill_fabric_domain(request.nvml, result.card);
        } catch (const Error& e) {
            result.problem = e.problem();
        }
        rank_phases(api, rv, request, result, log, context);
        if (result.problem) {
            // Out of memory beside another job (or its exclusive context) is a GPU in use, exit 3.
            const std::string uuid = device_identity(api, request.id.device, request.nvml).uuid;
            judge_held_problem(*result.problem, request.nvml, uuid, {::getpid()});
        }
    } catch (const Interrupted&) {
        if (!request.keep) rv.withdraw();
        throw;
    }
}

}  // namespace cumemctl::matrix
