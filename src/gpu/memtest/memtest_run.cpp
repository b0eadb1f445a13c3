#include "gpu/memtest/memtest_run.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/interrupt.hpp"
#include "cuda/driver_call.hpp"
#include "cuda/owned_handle.hpp"
#include "gpu/verify/memtest_pattern.hpp"
#include "gpu/verify/verify_module.hpp"
#include "util/stopwatch.hpp"

namespace cumemctl::gpu::memtest {

// The stream, events and mismatch log of a run, released on every path.
struct RunResources {
    VerifyKernels kernels;
    OwnedHandle<CUstream> stream;
    OwnedHandle<CUevent> start, end, chunk[2];
    OwnedHandle<CUdeviceptr> log;
    unsigned capacity = 0;

    RunResources(const DriverApi& api, unsigned records)
        : kernels(verify_kernels(api)),
          stream(api.cuStreamDestroy),
          start(api.cuEventDestroy),
          end(api.cuEventDestroy),
          chunk{OwnedHandle<CUevent>(api.cuEventDestroy), OwnedHandle<CUevent>(api.cuEventDestroy)},
          log(api.cuMemFree),
          capacity(records) {
        // A blocking stream: it waits for the legacy default stream, so the log that the synchronous
        // cuMemcpyHtoD resets is in place before the checks run.
        CU_CALL(api, cuStreamCreate, stream.out(), CU_STREAM_DEFAULT);
        CU_CALL(api, cuEventCreate, start.out(), CU_EVENT_DEFAULT);
        CU_CALL(api, cuEventCreate, end.out(), CU_EVENT_DEFAULT);
        for (auto& e : chunk) CU_CALL(api, cuEventCreate, e.out(), CU_EVENT_DISABLE_TIMING);
        CU_CALL(api, cuMemAlloc, log.out(), mismatch_log_bytes(capacity));
        // One launch of each kernel over no word: a driver that loads kernels lazily loads them now.
        KernelArgs none{log.get(), 0, 0, kConstant, 0, kConstant, 0, log.get()};
        void* params[] = {&none};
        for (CUfunction f : {kernels.memtest_fill, kernels.memtest_check, kernels.memtest_check_write}) {
            CU_CALL(api, cuLaunchKernel, f, 1, 1, 1, verify::kThreads, 1, 1, 0, stream.get(), params, nullptr);
        }
        CU_CALL(api, cuStreamSynchronize, stream.get());
    }
};

namespace {

CUfunction kernel_for(const VerifyKernels& k, Pass::Op op) {
    switch (op) {
        case Pass::Op::fill:
            return k.memtest_fill;
        case Pass::Op::check:
            return k.memtest_check;
        case Pass::Op::check_write:
            return k.memtest_check_write;
    }
    return nullptr;
}

// Runs one pattern pass and fills `r`; appends its recorded mismatches to `out`.
class PassRunner {
public:
    PassRunner(const DriverApi& api, const TestMemory& memory, const RunPlan& plan, RunResources& res, RunResult& out)
        : api_(api), memory_(memory), plan_(plan), res_(res), out_(out) {}

    PatternResult run(Pattern pattern, unsigned pass, Progress& progress) {
        const std::vector<Pass> passes = pattern_passes(pattern, plan_.seed);
        const MismatchLog header{0, res_.capacity, {}};
        CU_CALL(api_, cuMemcpyHtoD, res_.log.get(), &header, 16);
        CU_CALL(api_, cuEventRecord, res_.start.get(), res_.stream.get());
        for (const Pass& p : passes) {
            for (const Chunk& c : memory_.chunks()) {
                launch(p, c);
                progress.bytes_done += c.size * (p.op == Pass::Op::check_write ? 2 : 1);
                progress.seconds = watch_.seconds();
                if (plan_.progress) plan_.progress(progress);
            }
        }
        CU_CALL(api_, cuEventRecord, res_.end.get(), res_.stream.get());
        CU_CALL(api_, cuEventSynchronize, res_.end.get());
        PatternResult r{pattern_name(pattern),
                        pass,
                        memory_.bytes(),
                        traffic_per_byte(passes) * memory_.bytes(),
                        elapsed_seconds(api_, res_.start.get(), res_.end.get()),
                        0};
        r.mismatches = read_log(r);
        return r;
    }

private:
    // Launches one pass over one chunk, then waits for the chunk before it: one chunk queued at most.
    void launch(const Pass& p, const Chunk& c) {
        check_interrupted();
        KernelArgs args{memory_.base() + c.offset,
                        c.size / 16,
                        c.offset / 16,
                        p.kind,
                        p.param,
                        p.next_kind,
                        p.next_param,
                        p.op == Pass::Op::fill ? 0 : res_.log.get()};
        launch_over_words(api_, kernel_for(res_.kernels, p.op), res_.kernels.grid, res_.stream.get(), args.words,
                          &args);
        CU_CALL(api_, cuEventRecord, res_.chunk[launches_ % 2].get(), res_.stream.get());
        if (launches_ > 0) CU_CALL(api_, cuEventSynchronize, res_.chunk[(launches_ - 1) % 2].get());
        ++launches_;
    }

    // Reads the log back: the exact count, and the recorded words as mismatches of this pattern pass.
    std::uint64_t read_log(const PatternResult& r) {
        MismatchLog header{};
        CU_CALL(api_, cuMemcpyDtoH, &header, res_.log.get(), 16);
        if (header.count == 0) return 0;
        const auto kept = static_cast<std::size_t>(std::min<unsigned long long>(header.count, res_.capacity));
        std::vector<MismatchRecord> records(kept);
        CU_CALL(api_, cuMemcpyDtoH, records.data(), res_.log.get() + 16, kept * sizeof(MismatchRecord));
        std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.address < b.address; });
        for (const MismatchRecord& m : records) {
            const std::uint64_t offset = m.address - memory_.base();
            out_.recorded.push_back({r.pattern, r.pass, memory_.chunk_at(offset), offset, m.expected_lo, m.expected_hi,
                                     m.actual_lo, m.actual_hi});
        }
        return header.count;
    }

    const DriverApi& api_;
    const TestMemory& memory_;
    const RunPlan& plan_;
    RunResources& res_;
    RunResult& out_;
    Stopwatch watch_;
    unsigned long long launches_ = 0;
};

std::uint64_t planned_traffic(const TestMemory& memory, const RunPlan& plan) {
    std::uint64_t per_byte = 0;
    for (const Pattern p : plan.patterns) per_byte += traffic_per_byte(pattern_passes(p, 0));
    return per_byte * memory.bytes() * plan.passes;
}

}  // namespace

std::vector<unsigned> Mismatch::bits() const {
    std::vector<unsigned> out;
    const std::uint64_t lo = expected_lo ^ actual_lo, hi = expected_hi ^ actual_hi;
    for (unsigned b = 0; b < 64; ++b) {
        if ((lo >> b) & 1) out.push_back(b);
    }
    for (unsigned b = 0; b < 64; ++b) {
        if ((hi >> b) & 1) out.push_back(64 + b);
    }
    return out;
}

PatternRunner::PatternRunner(const DriverApi& api, const RunPlan& plan)
    : api_(api), plan_(plan), res_(std::make_unique<RunResources>(api, std::max(plan.max_records, 1u))) {}

PatternRunner::~PatternRunner() = default;

RunResult PatternRunner::run(const TestMemory& memory) {
    const DriverApi& api = api_;
    const RunPlan& plan = plan_;
    RunResources& res = *res_;
    RunResult out;
    PassRunner runner(api, memory, plan, res, out);
    Progress progress{"", 0, plan.passes, 0, planned_traffic(memory, plan), 0};
    Stopwatch watch;
    std::string current;
    try {
        for (unsigned pass = 1; pass <= plan.passes; ++pass) {
            for (const Pattern p : plan.patterns) {
                current = fmt::format("{} pass {}", pattern_name(p), pass);
                if (out.yielded.empty() && plan.yield) out.yielded = plan.yield();
                if (!out.yielded.empty()) {
                    out.not_run.push_back(current);
                    continue;
                }
                if (plan.time_budget && watch.seconds() >= *plan.time_budget) {
                    out.budget_ran_out = true;
                    out.not_run.push_back(current);
                    continue;
                }
                progress.pattern = pattern_name(p);
                progress.pass = pass;
                const PatternResult r = runner.run(p, pass, progress);
                out.mismatches += r.mismatches;
                out.done.push_back(r);
            }
        }
    } catch (const Interrupted& stop) {
        // The chunks queued finish before the memory goes; a failure here changes nothing.
        (void)api.cuStreamSynchronize(res.stream.get());
        out.interrupted_by = stop.signal();
        out.stopped_in = current;
    }
    out.seconds = watch.seconds();
    return out;
}

}  // namespace cumemctl::gpu::memtest
