#include "gpu/pool/pool_ipc.hpp"

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "cuda/owned_handle.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/device/memory_props.hpp"
#include "gpu/diagnosis/diagnosis.hpp"
#include "gpu/pool/pool_workload.hpp"
#include "gpu/verify/verify.hpp"
#include "ipc/child.hpp"
#include "ipc/envelope.hpp"
#include "ipc/hex.hpp"
#include "ipc/process.hpp"
#include "report/report.hpp"
#include "util/size.hpp"
#include "util/unix_socket.hpp"

namespace cumemctl::gpu {
namespace {

// Explains a failed export or import of a pool's handle (a fabric handle refused for want of an
// IMEX channel, above all) through the diagnosis layer.
void diagnose_handle_failure(const DriverApi& api, Error& e, int device, CUmemAllocationHandleType type,
                             const std::string& imex_channel_dir) {
    DiagnosisContext context;
    context.device = device;
    context.handle_type = type;
    context.imex_channel_dir = imex_channel_dir;
    diagnose_problem(api, e.problem(), context);
}

// The exporter's steps up to handing pool and pointer to the importer (`child`, started here where it
// was not started ahead).
bool export_and_send(const DriverApi& api, CUmemoryPool pool, CUdeviceptr ptr, const IpcRequest& r, StepLog& out,
                     std::optional<ipc::Child>& child) {
    if (!out.attempt("write pattern", [&] {
            const VerifyResult v = fill_pattern(api, ptr, r.size, r.seed);
            return fmt::format("{} written ({:.1f} GB/s)", format_size(v.bytes), v.fill_gbps);
        })) {
        return false;
    }
    UniqueFd pool_fd;
    CUmemFabricHandle fabric{};
    if (!out.attempt("export pool", [&] {
            try {
                if (r.handle_type == CU_MEM_HANDLE_TYPE_FABRIC) {
                    CU_CALL(api, cuMemPoolExportToShareableHandle, &fabric, pool, r.handle_type, 0);
                    return std::string("fabric handle");
                }
                int fd = -1;
                CU_CALL(api, cuMemPoolExportToShareableHandle, &fd, pool, r.handle_type, 0);
                pool_fd.reset(fd);
                return fmt::format("POSIX file descriptor {}", fd);
            } catch (Error& e) {
                diagnose_handle_failure(api, e, r.device, r.handle_type, r.imex_channel_dir);
                throw;
            }
        })) {
        return false;
    }
    CUmemPoolPtrExportData data{};
    if (!out.attempt("export pointer", [&] {
            CU_CALL(api, cuMemPoolExportPointer, &data, ptr);
            return fmt::format("{} at {:#x}", format_size(r.size), ptr);
        })) {
        return false;
    }
    if (!out.attempt("start importer", [&] {
            if (child) return fmt::format("a second cumemctl process, pid {}, started ahead", child->process.pid());
            child.emplace(start_pool_importer(api, r));
            return fmt::format("a second cumemctl process, pid {}", child->process.pid());
        })) {
        return false;
    }
    return out.attempt("send pool and pointer", [&] {
        ipc::Request request;
        request.service = kPoolImportService.name;
        request.fields = {{"handle_type", handle_type_name(r.handle_type)},
                          {"size", r.size},
                          {"seed", r.seed},
                          {"pointer", ipc::to_hex(data.reserved, sizeof data.reserved)},
                          {"fabric_handle", ipc::to_hex(fabric.data, sizeof fabric.data)},
                          {"imex_channel_dir", r.imex_channel_dir}};
        ipc::send_request(child->socket.get(), request, pool_fd.get());
        return pool_fd.valid() ? std::string("over a Unix socket, the descriptor with SCM_RIGHTS")
                               : std::string("over a Unix socket");
    });
}

// Gives `device` read-write access to an imported pool where it has less (as NVIDIA's IPC sample does).
std::string grant_access(const DriverApi& api, CUmemoryPool pool, int device) {
    CUmemLocation location{CU_MEM_LOCATION_TYPE_DEVICE, device};
    CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    CU_CALL(api, cuMemPoolGetAccess, &flags, pool, &location);
    if (flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE) return fmt::format("device {} may read and write", device);
    const CUmemAccessDesc desc{location, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CU_CALL(api, cuMemPoolSetAccess, pool, &desc, 1);
    return fmt::format("granted device {} read-write access (it had {})", device,
                       flags == CU_MEM_ACCESS_FLAGS_PROT_READ ? "read" : "none");
}

// Frees a pointer imported from a pool as the pool-IPC protocol asks: cuMemFreeAsync on the importer's
// stream, then cuStreamSynchronize, so that the free is done before the importer reports "freed" and the
// exporter frees the allocation. The first refusal is the answer.
CUresult free_imported(const DriverApi& api, CUdeviceptr ptr, CUstream stream) {
    if (api.cuMemFreeAsync == nullptr || api.cuStreamSynchronize == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
    const CUresult freed = api.cuMemFreeAsync(ptr, stream);
    if (freed != CUDA_SUCCESS) return freed;
    return api.cuStreamSynchronize(stream);
}

// The importer's steps once the exporter's message came (the context is current). A failed import ends
// them; after a failed pattern check it still frees.
void import_and_check(const DriverApi& api, int device, const nlohmann::json& msg, int fd, StepLog& out) {
    const auto type = parse_handle_type(msg.at("handle_type").get<std::string>());
    const std::uint64_t size = msg.at("size"), seed = msg.at("seed");
    CUmemPoolPtrExportData data{};
    ipc::from_hex(msg.at("pointer").get<std::string>(), data.reserved, sizeof data.reserved);
    CUmemFabricHandle fabric{};
    ipc::from_hex(msg.at("fabric_handle").get<std::string>(), fabric.data, sizeof fabric.data);
    // What the importer holds: freed (the pointer first) on the way out of a step that failed; what the
    // driver will not free is counted as every guard counts it. The imported pointer is freed as the
    // pool-IPC protocol says, stream-ordered and synchronised (free_imported), before the exporter frees.
    const Stream stream(api);
    OwnedHandle<CUmemoryPool> imported_pool([&api](CUmemoryPool p) { return api.cuMemPoolDestroy(p); });
    OwnedHandle<CUdeviceptr> imported_ptr([&](CUdeviceptr p) { return free_imported(api, p, stream.get()); });
    if (!out.attempt("import pool",
                     [&] {
                         // A POSIX handle is passed as the descriptor's value in the pointer.
                         // NOLINTNEXTLINE(performance-no-int-to-ptr)
                         void* posix = reinterpret_cast<void*>(static_cast<std::intptr_t>(fd));
                         void* handle = type == CU_MEM_HANDLE_TYPE_FABRIC ? static_cast<void*>(&fabric) : posix;
                         try {
                             CU_CALL(api, cuMemPoolImportFromShareableHandle, imported_pool.out(), handle, type, 0);
                         } catch (Error& e) {
                             diagnose_handle_failure(api, e, device, type, msg.at("imex_channel_dir"));
                             throw;
                         }
                         return fmt::format("from the {} handle", handle_type_name(type));
                     }) ||
        !out.attempt("pool access", [&] { return grant_access(api, imported_pool.get(), device); }) ||
        !out.attempt("import pointer", [&] {
            CU_CALL(api, cuMemPoolImportPointer, imported_ptr.out(), imported_pool.get(), &data);
            return fmt::format("{} at {:#x} in this process", format_size(size), imported_ptr.get());
        })) {
        return;
    }
    out.attempt("read pattern", [&] {
        const VerifyResult v = check_pattern(api, imported_ptr.get(), size, seed);
        if (!v.ok()) {
            throw Error(
                ExitCode::failed,
                fmt::format("{} of {} 16-byte words differ from what the exporter wrote, the first at offset {}",
                            v.mismatches, (size + 15) / 16, v.first_mismatch_offset));
        }
        return fmt::format("all {} as the exporter wrote them ({:.1f} GB/s)", format_size(size), v.check_gbps);
    });
    out.attempt("free import", [&] {
        check(api, imported_ptr.destroy(), "cuMemFreeAsync");
        return std::string("cuMemFreeAsync on the imported pointer and a synchronisation, before the exporter frees");
    });
    out.attempt("close imported pool", [&] {
        check(api, imported_pool.destroy(), "cuMemPoolDestroy");
        return std::string("cuMemPoolDestroy");
    });
}

}  // namespace

ipc::Child start_pool_importer(const DriverApi& api, const IpcRequest& request) {
    return start_importer(ImporterStart{request.executable, request.libcuda, child_device_view(api, request.device)});
}

void run_pool_ipc_check(const DriverApi& api, CUmemoryPool pool, CUdeviceptr ptr, const IpcRequest& request,
                        StepLog& out) {
    std::optional<ipc::Child> child;
    if (request.importer != nullptr) child = std::exchange(*request.importer, std::nullopt);
    if (!export_and_send(api, pool, ptr, request, out, child)) return;
    std::optional<ipc::Envelope> report;
    const bool received = out.attempt("wait for the importer's report", [&] {
        report = ipc::receive_envelope(child->socket.get(), request.timeout);
        return std::string("received");
    });
    if (received) {
        out.append(report->steps);
        out.attempt("read the importer's report", [&] {
            if (!report->problem) return std::string("every importer step passed; it freed its import first");
            Problem theirs = *report->problem;
            theirs.message = "importer: " + theirs.message;
            std::string message = theirs.message;
            out.keep_problem(std::move(theirs));
            return message;
        });
    }
    // An importer that answered serves on where the caller keeps it; else it ends (one that did not
    // answer is killed when its wait runs out).
    const ImporterSlot slot{request.importer, request.keep_importer && received};
    if (slot.keep) {
        release_importer(std::move(*child), slot, request.timeout);
        return;
    }
    out.attempt("importer exit", [&] {
        const int status = *release_importer(std::move(*child), slot, request.timeout);
        std::string how = ipc::describe_wait_status(status);
        // Its exit code repeats the problem its report gave.
        if (status != 0 && !(received && report->problem)) throw Error(ExitCode::failed, "the importer " + how);
        return how;
    });
}

ImporterAnswer answer_pool_import(const ImporterSession& session, const ipc::Request& message) {
    StepLog out({}, "importer");
    out.append(session.startup);
    ImporterAnswer a;
    if (session.problem) {
        a.exit_problem = session.problem;
    } else {
        out.note("receive", session.receive_seconds, "the pool and pointer over a Unix socket").call = "recvmsg";
        try {
            import_and_check(*session.api, session.device, message.fields, message.fd.get(), out);
        } catch (const nlohmann::json::exception& e) {
            out.keep_problem(internal_error(fmt::format("the exporter's message: {}", e.what())));
        } catch (const Error& e) {
            out.keep_problem(e.problem());
        }
        a.exit_problem = out.problem();
    }
    a.envelope.steps = out.steps();
    a.envelope.problem = a.exit_problem;
    return a;
}

}  // namespace cumemctl::gpu
