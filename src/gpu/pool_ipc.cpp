#include "gpu/pool_ipc.hpp"

#include <cstring>

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "gpu/memory_props.hpp"
#include "gpu/primary_context.hpp"
#include "gpu/verify.hpp"
#include "report/report.hpp"
#include "util/child_process.hpp"
#include "util/size.hpp"
#include "util/stopwatch.hpp"
#include "util/unix_socket.hpp"

namespace cumemctl {
namespace {

// The descriptor number the importer finds its socket at.
constexpr int kImporterSocketFd = 3;

std::string to_hex(const unsigned char* data, std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += fmt::format("{:02x}", data[i]);
    return s;
}

void from_hex(const std::string& hex, unsigned char* data, std::size_t n) {
    if (hex.size() != 2 * n) throw Error(ExitCode::failed, "internal error: a malformed handle came over the socket");
    for (std::size_t i = 0; i < n; ++i)
        data[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
}

// Explains a fabric export refused with NOT_PERMITTED: the driver wants an IMEX channel.
void explain_fabric_refusal(Problem& p) {
    if (!p.driver || p.driver->code != CUDA_ERROR_NOT_PERMITTED) return;
    p.cause =
        "exporting a fabric handle needs an IMEX channel this process can open "
        "(/dev/nvidia-caps-imex-channels/channelN); the pool itself was created and allocated from";
    p.remedy =
        "create a channel node (cumemctl imex-setup, or mknod /dev/nvidia-caps-imex-channels/channel0 with "
        "the nvidia-caps-imex-channels major from /proc/devices), or use --handle-type posix-fd";
}

// The exporter's steps up to handing pool and pointer to a started importer.
bool export_and_send(const DriverApi& api, CUmemoryPool pool, CUdeviceptr ptr, const IpcRequest& r, IpcOutcome& out,
                     int socket, std::optional<ChildProcess>& child, int child_socket) {
    const char* me = "exporter";
    if (!out.run(me, "write pattern", [&] {
            const VerifyResult v = fill_pattern(api, ptr, r.size, r.seed);
            return fmt::format("{} written ({:.1f} GB/s)", format_size(v.bytes), v.fill_gbps);
        })) {
        return false;
    }
    UniqueFd pool_fd;
    CUmemFabricHandle fabric{};
    if (!out.run(me, "export pool", [&] {
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
                explain_fabric_refusal(e.problem());
                throw;
            }
        })) {
        return false;
    }
    CUmemPoolPtrExportData data{};
    if (!out.run(me, "export pointer", [&] {
            CU_CALL(api, cuMemPoolExportPointer, &data, ptr);
            return fmt::format("{} at {:#x}", format_size(r.size), ptr);
        })) {
        return false;
    }
    if (!out.run(me, "start importer", [&] {
            child.emplace(ChildProcess::spawn_self(
                {"__pool-import", "--socket-fd", std::to_string(kImporterSocketFd), "--libcuda", r.libcuda},
                child_socket, kImporterSocketFd));
            return fmt::format("a second cumemctl process, pid {}", child->pid());
        })) {
        return false;
    }
    return out.run(me, "send pool and pointer", [&] {
        const nlohmann::json msg{{"device", r.device},
                                 {"handle_type", handle_type_name(r.handle_type)},
                                 {"size", r.size},
                                 {"seed", r.seed},
                                 {"pointer", to_hex(data.reserved, sizeof data.reserved)},
                                 {"fabric_handle", to_hex(fabric.data, sizeof fabric.data)}};
        send_message(socket, msg.dump(), pool_fd.get());
        return pool_fd.valid() ? std::string("over a Unix socket, the descriptor with SCM_RIGHTS")
                               : std::string("over a Unix socket");
    });
}

// Appends the importer's steps to `out` and returns the problem it reported, if any.
std::optional<Problem> take_report(const std::string& text, IpcOutcome& out) {
    try {
        const auto j = nlohmann::json::parse(text);
        for (const auto& s : j.at("steps")) {
            out.steps.push_back({"importer", s.at("step"), s.at("ok"), s.at("detail"), s.at("seconds")});
        }
        if (!j.contains("problem")) return std::nullopt;
        const auto& p = j["problem"];
        Problem problem;
        problem.exit_code = static_cast<ExitCode>(p.at("exit_code").get<int>());
        problem.message = "importer: " + p.at("message").get<std::string>();
        problem.cause = p.at("cause");
        problem.remedy = p.at("remedy");
        if (p.contains("driver_call")) {
            const auto& d = p["driver_call"];
            problem.driver = DriverFailure{d.at("call"), d.at("result"), d.at("name"), d.at("text")};
        }
        return problem;
    } catch (const nlohmann::json::exception& e) {
        throw Error(ExitCode::failed,
                    fmt::format("internal error: the importer's report does not parse: {}", e.what()));
    }
}

// What the importer holds: freed (the pointer first) on the way out of a step that failed.
struct Imports {
    const DriverApi& api;
    CUmemoryPool pool = nullptr;
    CUdeviceptr ptr = 0;
    ~Imports() {
        if (ptr != 0) api.cuMemFree(ptr);
        if (pool != nullptr) api.cuMemPoolDestroy(pool);
    }
};

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

// The importer's steps. A failed import ends them; after a failed pattern check it still frees.
void import_and_check(const DriverApi& api, const nlohmann::json& msg, int fd, IpcOutcome& out) {
    const char* me = "importer";
    const int device = msg.at("device");
    const auto type = parse_handle_type(msg.at("handle_type").get<std::string>());
    const std::uint64_t size = msg.at("size"), seed = msg.at("seed");
    CUmemPoolPtrExportData data{};
    from_hex(msg.at("pointer"), data.reserved, sizeof data.reserved);
    CUmemFabricHandle fabric{};
    from_hex(msg.at("fabric_handle"), fabric.data, sizeof fabric.data);
    std::optional<PrimaryContext> context;
    if (!out.run(me, "open context", [&] {
            context.emplace(api, device);
            return fmt::format("primary context of device {}", device);
        })) {
        return;
    }
    Imports imports{api};
    if (!out.run(me, "import pool",
                 [&] {
                     void* handle = type == CU_MEM_HANDLE_TYPE_FABRIC
                                        ? static_cast<void*>(&fabric)
                                        : reinterpret_cast<void*>(static_cast<std::intptr_t>(fd));
                     CU_CALL(api, cuMemPoolImportFromShareableHandle, &imports.pool, handle, type, 0);
                     return fmt::format("from the {} handle", handle_type_name(type));
                 }) ||
        !out.run(me, "pool access", [&] { return grant_access(api, imports.pool, device); }) ||
        !out.run(me, "import pointer", [&] {
            CU_CALL(api, cuMemPoolImportPointer, &imports.ptr, imports.pool, &data);
            return fmt::format("{} at {:#x} in this process", format_size(size), imports.ptr);
        })) {
        return;
    }
    out.run(me, "read pattern", [&] {
        const VerifyResult v = check_pattern(api, imports.ptr, size, seed);
        if (!v.ok()) {
            throw Error(
                ExitCode::failed,
                fmt::format("{} of {} 16-byte words differ from what the exporter wrote, the first at offset {}",
                            v.mismatches, (size + 15) / 16, v.first_mismatch_offset));
        }
        return fmt::format("all {} as the exporter wrote them ({:.1f} GB/s)", format_size(size), v.check_gbps);
    });
    out.run(me, "pool statistics", [&] {
        cuuint64_t reserved = 0;
        const CUresult r = api.cuMemPoolGetAttribute(imports.pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved);
        if (r == CUDA_SUCCESS) return fmt::format("answered: {} reserved", format_size(reserved));
        return fmt::format("refused with {}: pool statistics are per process",
                           describe_failure(api, r, "cuMemPoolGetAttribute").name);
    });
    out.run(me, "free import", [&] {
        CU_CALL(api, cuMemFree, std::exchange(imports.ptr, 0));
        return std::string("cuMemFree on the imported pointer, before the exporter frees");
    });
    out.run(me, "close imported pool", [&] {
        CU_CALL(api, cuMemPoolDestroy, std::exchange(imports.pool, nullptr));
        return std::string("cuMemPoolDestroy");
    });
}

}  // namespace

bool IpcOutcome::run(const char* process, const char* step, const std::function<std::string()>& fn) {
    Stopwatch watch;
    try {
        std::string detail = fn();
        steps.push_back({process, step, true, std::move(detail), watch.seconds()});
        return true;
    } catch (const Error& e) {
        steps.push_back({process, step, false, e.problem().message, watch.seconds()});
        if (!problem) problem = e.problem();
        return false;
    }
}

nlohmann::json to_json(const IpcStep& step) {
    return {{"process", step.process},
            {"step", step.step},
            {"ok", step.ok},
            {"detail", step.detail},
            {"seconds", step.seconds}};
}

void run_pool_ipc_check(const DriverApi& api, CUmemoryPool pool, CUdeviceptr ptr, const IpcRequest& request,
                        IpcOutcome& out) {
    std::optional<ChildProcess> child;
    auto [mine, theirs] = socket_pair();
    const bool sent = export_and_send(api, pool, ptr, request, out, mine.get(), child, theirs.get());
    theirs.reset();
    if (!sent) return;
    const char* me = "exporter";
    std::optional<Message> report;
    const bool received = out.run(me, "wait for the importer's report", [&] {
        report = receive_message(mine.get(), static_cast<int>(request.timeout.count()));
        return std::string("received");
    });
    if (received) {
        out.run(me, "read the importer's report", [&] {
            std::optional<Problem> theirs_problem = take_report(report->bytes, out);
            if (!theirs_problem) return std::string("every importer step passed; it freed its import first");
            const std::string message = theirs_problem->message;
            if (!out.problem) out.problem = std::move(theirs_problem);
            return message;
        });
    }
    out.run(me, "importer exit", [&] {
        const auto status = child->wait(request.timeout);
        if (!status) throw Error(ExitCode::failed, "the importer did not end in time and was killed");
        if (*status != 0) throw Error(ExitCode::failed, "the importer " + describe_wait_status(*status));
        return describe_wait_status(*status);
    });
}

void serve_pool_import(const DriverApi& api, int socket, std::chrono::milliseconds timeout) {
    Message msg = receive_message(socket, static_cast<int>(timeout.count()));
    IpcOutcome out;
    try {
        import_and_check(api, nlohmann::json::parse(msg.bytes), msg.fd.get(), out);
    } catch (const nlohmann::json::exception& e) {
        out.problem = Problem{
            ExitCode::failed, fmt::format("internal error: the exporter's message: {}", e.what()), {}, {}, std::nullopt,
            std::nullopt};
    } catch (const Error& e) {
        out.problem = e.problem();
    }
    msg.fd.reset();
    nlohmann::json reply{{"steps", nlohmann::json::array()}};
    for (const auto& s : out.steps) reply["steps"].push_back(to_json(s));
    if (out.problem) reply["problem"] = to_json(*out.problem);
    send_message(socket, reply.dump());
}

}  // namespace cumemctl
