#include "matrix/rank_run.hpp"

#include <unistd.h>

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "nvml/fabric_info.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/device/granularity.hpp"
#include "gpu/device/memory_props.hpp"
#include "gpu/device/primary_context.hpp"
#include "gpu/diagnosis/diagnosis.hpp"
#include "gpu/verify/verify.hpp"
#include "gpu/vmm/device_mapping.hpp"
#include "gpu/vmm/shareable_handle.hpp"
#include "ipc/hex.hpp"
#include "matrix/pair_diagnosis.hpp"
#include "steps/step_log.hpp"
#include "util/host.hpp"
#include "util/size.hpp"
#include "util/stopwatch.hpp"
#include "util/version.hpp"

namespace cumemctl::matrix {
using namespace gpu;
namespace {

using Clock = std::chrono::steady_clock;

// This rank's own memory, held until every row is in.
struct OwnMemory {
    Granularity granularity;
    std::uint64_t size = 0;
    std::uint64_t seed = 0;
    AllocationHandle handle;
    std::optional<DeviceMapping> mapping;  // declared after the handle: unmapped first
    std::optional<ExportedHandle> exported;
};

std::string gpu_uuid_of(const DriverApi& api, int device) {
    CUdevice dev = 0;
    CUuuid uuid{};
    if (api.cuDeviceGetUuid == nullptr || api.cuDeviceGet(&dev, device) != CUDA_SUCCESS ||
        api.cuDeviceGetUuid(&uuid, dev) != CUDA_SUCCESS) {
        return "";
    }
    return format_uuid(uuid);
}

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

// Polls the folder until every rank of `wanted` has its file, or the timeout; `found(rank, read)` is
// called once per rank when its file appears (a refused one too). Returns the ranks still missing.
template <class NameOf, class Found>
std::set<int> wait_for_files(const RendezvousDir& dir, std::set<int> wanted, NameOf name_of, std::size_t max_bytes,
                             const RankRequest& request, Found found) {
    const auto deadline = Clock::now() + request.timeout;
    while (true) {
        for (auto it = wanted.begin(); it != wanted.end();) {
            const FileRead r = dir.read(name_of(*it), max_bytes);
            if (r.present) {
                found(*it, r);
                it = wanted.erase(it);
            } else {
                ++it;
            }
        }
        if (wanted.empty() || Clock::now() >= deadline) return wanted;
        check_interrupted();
        std::this_thread::sleep_for(request.poll);
    }
}

// Polls until none of `names` exists, or the timeout; returns those still there.
std::vector<std::string> wait_for_gone(const RendezvousDir& dir, std::vector<std::string> names,
                                       const RankRequest& request) {
    const auto deadline = Clock::now() + request.timeout;
    while (true) {
        std::erase_if(names, [&](const std::string& n) { return !dir.exists(n); });
        if (names.empty() || Clock::now() >= deadline) return names;
        check_interrupted();
        std::this_thread::sleep_for(request.poll);
    }
}

std::string list_ranks(const std::set<int>& ranks) {
    std::string out;
    for (const int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
    return out;
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

// Publishes `name` and remembers it as this rank's; a failure is recorded (and returned false).
bool publish(const RendezvousDir& dir, const std::string& step, const std::string& name, const std::string& content,
             std::vector<std::string>& mine, StepLog& log, std::optional<Problem>& problem) {
    try {
        log.time(step, "linkat", [&] { dir.publish(name, content); });
        mine.push_back(name);
        return true;
    } catch (const Error& e) {
        if (!problem) problem = e.problem();
        return false;
    }
}

// The end: done, wait until every rank is done, remove this rank's card and row, wait until every
// rank has removed its own, remove done.
void tidy_up(const RendezvousDir& dir, const RankRequest& request, RankResult& result, std::vector<std::string>& mine,
             StepLog& log) {
    const std::string& run = request.id.run;
    std::optional<Problem> ignored;
    if (!publish(dir, "publish-done", done_name(run, request.id.rank), "{}", mine, log, ignored)) return;
    std::set<int> with_rows;
    for (const auto& [r, row] : result.rows) {
        if (r != request.id.rank) with_rows.insert(r);
    }
    Stopwatch watch;
    const std::set<int> late = wait_for_files(
        dir, with_rows, [&](int r) { return done_name(run, r); }, 64, request, [](int, const FileRead&) {});
    log.note("wait-done", watch.seconds(), late.empty() ? "every rank is done" : "late: " + list_ranks(late));
    if (!late.empty()) {
        result.warnings.push_back(
            fmt::format("rank(s) {} did not finish within {}; this rank's files are removed "
                        "anyway",
                        list_ranks(late), ipc::describe(request.timeout)));
    }
    std::vector<std::string> rows_left;
    for (const int r : with_rows) {
        if (!late.contains(r)) rows_left.push_back(row_name(run, r));
    }
    const std::string done = done_name(run, request.id.rank);
    for (const auto& name : mine) {
        if (name != done) dir.remove(name);
    }
    const std::vector<std::string> left = wait_for_gone(dir, rows_left, request);
    if (!left.empty())
        result.warnings.push_back(fmt::format("{} file(s) of other ranks were still there", left.size()));
    mine.clear();
    dir.remove(done);
}

// Everything after the context: the phases of the run.
void rank_phases(const DriverApi& api, const RendezvousDir& dir, const RankRequest& request, RankResult& result,
                 StepLog& log, DiagnosisContext& context, std::vector<std::string>& mine) {
    const std::string& run = request.id.run;
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
    if (!publish(dir, "publish-card", card_name(run, request.id.rank), to_json(result.card).dump(), mine, log,
                 result.problem)) {
        // The name is taken (another run of the same name, or a stray file): this rank takes no part.
        result.row = Row{run, request.id.rank, result.card.host, {}};
        for (int j = 0; j < request.id.ranks; ++j) result.row.cells.push_back(own_failure_cell(j, *result.problem));
        return;
    }
    if (result.problem) own.reset();
    std::map<int, UniqueFd> fds;
    if (request.exchange != nullptr) {
        try {
            request.exchange->offer(request.id.rank, own ? own->exported->fd.get() : -1, result.problem);
            fds = log.time("descriptors", "recvmsg",
                           [&] { return request.exchange->collect(request.id.ranks, request.timeout); });
        } catch (const Error& e) {
            if (!result.problem) result.problem = e.problem();
        }
    }
    result.cards[request.id.rank] = result.card;
    std::set<int> others;
    for (int r = 0; r < request.id.ranks; ++r) {
        if (r != request.id.rank) others.insert(r);
    }
    Stopwatch watch;
    result.missing_cards = wait_for_files(
        dir, others, [&](int r) { return card_name(run, r); }, kMaxCardBytes, request,
        [&](int r, const FileRead& f) { take_card(r, f, request.id, result); });
    log.note(
        "wait-cards", watch.seconds(),
        result.missing_cards.empty() ? "every card is in" : "never came: rank " + list_ranks(result.missing_cards));
    fill_row(api, request, own ? &*own : nullptr, fds, result, log);
    fds.clear();
    publish(dir, "publish-row", row_name(run, request.id.rank), to_json(result.row).dump(), mine, log, result.problem);
    result.rows[request.id.rank] = result.row;
    std::set<int> expected;
    for (const auto& [r, card] : result.cards) {
        if (r != request.id.rank) expected.insert(r);
    }
    watch = Stopwatch();
    const std::set<int> no_row = wait_for_files(
        dir, expected, [&](int r) { return row_name(run, r); }, kMaxRowBytes, request,
        [&](int r, const FileRead& f) { take_row(r, f, request.id, result); });
    log.note("wait-rows", watch.seconds(), no_row.empty() ? "every row is in" : "no row: rank " + list_ranks(no_row));
    if (own) {
        own->mapping->release(log);
        log.time("release", "cuMemRelease", [&] { own->handle.release(); });
        own.reset();
    }
    if (!request.keep) tidy_up(dir, request, result, mine, log);
}

}  // namespace

void run_rank(const DriverApi& api, const RendezvousDir& dir, const RankRequest& request, RankResult& result) {
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
    std::vector<std::string> mine;  // the files this rank published and has not removed
    struct KeepSteps {
        StepLog& log;
        RankResult& result;
        ~KeepSteps() { result.steps = log.steps(); }
    } keep_steps{log, result};
    try {
        std::optional<PrimaryContext> ctx;
        try {
            log.time("context", "cuDevicePrimaryCtxRetain", [&] { ctx.emplace(api, request.id.device); });
            result.card.gpu_uuid = gpu_uuid_of(api, request.id.device);
            fill_fabric_domain(request.nvml, result.card);
        } catch (const Error& e) {
            result.problem = e.problem();
        }
        rank_phases(api, dir, request, result, log, context, mine);
    } catch (const Interrupted&) {
        if (!request.keep) {
            for (const auto& name : mine) dir.remove(name);
        }
        throw;
    }
}

}  // namespace cumemctl::matrix
