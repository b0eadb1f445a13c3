#include "pmix/pmix_client.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "base/bounded_call.hpp"
#include "base/error.hpp"
#include "base/setting.hpp"
#include "util/trusted_file.hpp"

#if CUMEMCTL_HAVE_PMIX
#include <pmix.h>
#endif

namespace cumemctl::pmix {

bool launched_by_pmix() {
    const char* ns = std::getenv("PMIX_NAMESPACE");
    const char* rank = std::getenv("PMIX_RANK");
    return ns != nullptr && *ns != '\0' && rank != nullptr && *rank != '\0';
}

namespace {

// What to do without a PMIx server or library (srun's --mpi is the launcher's option, not ours).
std::string no_pmix_remedy() {
    return fmt::format(
        "run under a launcher that starts a PMIx server (srun --mpi=pmix, mpirun, prterun), point {} (or "
        "CUMEMCTL_LIBPMIX) at its libpmix.so.2, or use a rendezvous folder ({} dir {} DIR)",
        setting_name(Setting::libpmix), setting_name(Setting::rendezvous), setting_name(Setting::rendezvous_dir));
}

// The libraries to try, in order.
std::vector<std::string> candidates(const std::string& library) {
    if (!library.empty()) return {library};
    if (const char* env = std::getenv("CUMEMCTL_LIBPMIX"); env != nullptr && *env != '\0') return {env};
    return {"libpmix.so.2", "/usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so.2",
            "/usr/lib/aarch64-linux-gnu/pmix2/lib/libpmix.so.2"};
}

}  // namespace

#if CUMEMCTL_HAVE_PMIX

struct Client::Impl {
    void* handle = nullptr;
    std::string library;
    std::string version;
    pmix_proc_t self{};
    std::uint32_t size = 0;
    std::optional<std::uint32_t> local_rank;
    bool initialised = false;
    // The fences and gets that never returned (Slurm's PMIx plugin does not honour PMIX_TIMEOUT in a
    // fence that a rank never joins, nor in a direct modex of a rank that died): their threads still
    // wait in the library, so the library is never freed, and the same call is not tried again (it
    // would queue behind the first). Other calls still are, each on a thread of its own (the library
    // is thread-safe): a fence over other ranks is another collective, a get of another rank another
    // request.
    std::vector<std::vector<std::uint32_t>> abandoned_fences;  // the rank sets ({}: the whole job)
    std::set<std::uint32_t> abandoned_gets;                    // the ranks
    bool abandoned() const { return !abandoned_fences.empty() || !abandoned_gets.empty(); }
    decltype(&PMIx_Init) init = nullptr;
    decltype(&PMIx_Finalize) finalize = nullptr;
    decltype(&PMIx_Put) put = nullptr;
    decltype(&PMIx_Commit) commit = nullptr;
    decltype(&PMIx_Fence) fence = nullptr;
    decltype(&PMIx_Get) get = nullptr;
    decltype(&PMIx_Error_string) error_string = nullptr;
    decltype(&PMIx_Get_version) get_version = nullptr;
    decltype(&PMIx_Value_destruct) value_destruct = nullptr;

    ~Impl() {
        if (initialised && finalize != nullptr) finalize(nullptr, 0);
        // The library stays loaded: its threads and plugins may outlive the finalize.
    }

    std::string why(pmix_status_t status) const {
        return fmt::format("{} ({})", error_string != nullptr ? error_string(status) : "?", static_cast<int>(status));
    }

    // A value that Get returned, freed as PMIX_VALUE_RELEASE does.
    void release(pmix_value_t* value) const {
        if (value == nullptr) return;
        value_destruct(value);
        std::free(value);
    }
};

namespace {

template <class F>
void resolve(Client::Impl& impl, F& slot, const char* name) {
    slot = reinterpret_cast<F>(::dlsym(impl.handle, name));  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    if (slot == nullptr) {
        throw Error(ExitCode::unavailable, fmt::format("{} has no {}: not a PMIx client library", impl.library, name),
                    no_pmix_remedy());
    }
}

pmix_info_t flag_info(const char* key) {
    pmix_info_t info;
    std::memset(&info, 0, sizeof info);
    std::strncpy(info.key, key, PMIX_MAX_KEYLEN);
    info.value.type = PMIX_BOOL;
    info.value.data.flag = true;
    return info;
}

// PMIx takes whole seconds; a part of one counts as one.
pmix_info_t timeout_info(ipc::Timeout timeout) {
    pmix_info_t info;
    std::memset(&info, 0, sizeof info);
    std::strncpy(info.key, PMIX_TIMEOUT, PMIX_MAX_KEYLEN);
    info.value.type = PMIX_INT;
    info.value.data.integer = static_cast<int>(std::max<std::int64_t>(1, (timeout.count() + 999) / 1000));
    return info;
}

// A number that Get returned (PMIX_JOB_SIZE, PMIX_LOCAL_RANK come as various unsigned types).
std::optional<std::uint32_t> number_of(const pmix_value_t* v) {
    if (v == nullptr) return std::nullopt;
    switch (v->type) {
        case PMIX_UINT32:
            return v->data.uint32;
        case PMIX_UINT16:
            return v->data.uint16;
        case PMIX_UINT8:
            return v->data.uint8;
        case PMIX_UINT64:
            return static_cast<std::uint32_t>(v->data.uint64);
        case PMIX_INT:
            return v->data.integer < 0 ? std::nullopt : std::optional<std::uint32_t>(v->data.integer);
        case PMIX_SIZE:
            return static_cast<std::uint32_t>(v->data.size);
        default:
            return std::nullopt;
    }
}

}  // namespace

Client Client::connect(const std::string& library) {
    auto impl = std::make_unique<Impl>();
    std::string tried;
    for (const auto& path : candidates(library)) {
        const TrustUse use{"the PMIx library",
                           fmt::format("give {} (or CUMEMCTL_LIBPMIX) a library that only root can change, or "
                                       "neither, for the system's libpmix.so.2",
                                       setting_name(Setting::libpmix))};
        std::string why;
        impl->handle = load_library(path, RTLD_NOW | RTLD_GLOBAL, use, why);  // its plugins need its symbols
        if (impl->handle != nullptr) {
            impl->library = path;
            break;
        }
        tried += fmt::format("{}{}", tried.empty() ? "" : "; ", why);
    }
    if (impl->handle == nullptr) {
        throw Error(Problem{.exit_code = ExitCode::unavailable,
                            .message = "cannot load the PMIx client library",
                            .cause = tried,
                            .remedy = no_pmix_remedy()});
    }
    resolve(*impl, impl->init, "PMIx_Init");
    resolve(*impl, impl->finalize, "PMIx_Finalize");
    resolve(*impl, impl->put, "PMIx_Put");
    resolve(*impl, impl->commit, "PMIx_Commit");
    resolve(*impl, impl->fence, "PMIx_Fence");
    resolve(*impl, impl->get, "PMIx_Get");
    resolve(*impl, impl->error_string, "PMIx_Error_string");
    resolve(*impl, impl->get_version, "PMIx_Get_version");
    resolve(*impl, impl->value_destruct, "PMIx_Value_destruct");
    impl->version = impl->get_version();
    if (const pmix_status_t s = impl->init(&impl->self, nullptr, 0); s != PMIX_SUCCESS) {
        throw Error(Problem{.exit_code = ExitCode::unavailable,
                            .message = fmt::format("PMIx_Init failed: {}", impl->why(s)),
                            .cause = launched_by_pmix()
                                         ? fmt::format("the PMIx server of namespace '{}' did not take this process",
                                                       std::getenv("PMIX_NAMESPACE"))
                                         : "no launcher set this process up for PMIx (PMIX_NAMESPACE is not set)",
                            .remedy = no_pmix_remedy()});
    }
    impl->initialised = true;
    pmix_proc_t job{};
    std::memcpy(job.nspace, impl->self.nspace, sizeof job.nspace);
    job.rank = PMIX_RANK_WILDCARD;
    pmix_value_t* v = nullptr;
    if (impl->get(&job, PMIX_JOB_SIZE, nullptr, 0, &v) == PMIX_SUCCESS) impl->size = number_of(v).value_or(0);
    impl->release(v);
    v = nullptr;
    if (impl->get(&impl->self, PMIX_LOCAL_RANK, nullptr, 0, &v) == PMIX_SUCCESS) impl->local_rank = number_of(v);
    impl->release(v);
    if (impl->size == 0) {
        throw Error(ExitCode::unavailable, "the PMIx server gave no job size (PMIX_JOB_SIZE)", no_pmix_remedy());
    }
    return Client(std::move(impl));
}

const std::string& Client::library() const {
    return impl_->library;
}
const std::string& Client::version() const {
    return impl_->version;
}
const std::string& Client::nspace() const {
    static thread_local std::string ns;
    ns = std::string(impl_->self.nspace, strnlen(impl_->self.nspace, sizeof impl_->self.nspace));
    return ns;
}
std::uint32_t Client::rank() const {
    return impl_->self.rank;
}
std::uint32_t Client::job_size() const {
    return impl_->size;
}
std::optional<std::uint32_t> Client::local_rank() const {
    return impl_->local_rank;
}

void Client::put(const std::string& key, const std::string& value) {
    pmix_value_t v;
    std::memset(&v, 0, sizeof v);
    v.type = PMIX_STRING;
    v.data.string = const_cast<char*>(value.c_str());  // PMIx_Put copies it
    if (const pmix_status_t s = impl_->put(PMIX_GLOBAL, key.c_str(), &v); s != PMIX_SUCCESS) {
        throw Error(ExitCode::failed, fmt::format("PMIx_Put of {} failed: {}", key, impl_->why(s)),
                    "check the launcher's PMIx server (its log names the failure)");
    }
}

void Client::commit() {
    if (const pmix_status_t s = impl_->commit(); s != PMIX_SUCCESS) {
        throw Error(ExitCode::failed, fmt::format("PMIx_Commit failed: {}", impl_->why(s)),
                    "check the launcher's PMIx server (its log names the failure)");
    }
}

namespace {

// How much longer than PMIx's own timeout a call may take before it is given up.
constexpr ipc::Timeout kGrace{2000};
// The most gets that run at once (one thread each).
constexpr std::size_t kGetsAtOnce = 64;

}  // namespace

Outcome Client::fence(ipc::Timeout timeout, const std::vector<std::uint32_t>& ranks) {
    const auto& gone = impl_->abandoned_fences;
    if (std::find(gone.begin(), gone.end(), ranks) != gone.end()) {
        return {false, "an earlier PMIx_Fence over the same ranks never returned"};
    }
    Impl* impl = impl_.get();
    auto outcome = call_within<Outcome>(timeout + kGrace, [impl, timeout, ranks] {
        std::vector<pmix_proc_t> procs(ranks.empty() ? 1 : ranks.size());
        for (std::size_t i = 0; i < procs.size(); ++i) {
            std::memcpy(procs[i].nspace, impl->self.nspace, sizeof procs[i].nspace);
            procs[i].rank = ranks.empty() ? PMIX_RANK_WILDCARD : ranks[i];
        }
        pmix_info_t info[2] = {flag_info(PMIX_COLLECT_DATA), timeout_info(timeout)};
        const pmix_status_t s = impl->fence(procs.data(), procs.size(), info, 2);
        return s == PMIX_SUCCESS ? Outcome{} : Outcome{false, impl->why(s)};
    });
    if (outcome) return *outcome;
    impl_->abandoned_fences.push_back(ranks);
    return {false, fmt::format("PMIx_Fence did not return within {} (given up)", ipc::describe(timeout + kGrace))};
}

std::vector<Client::Got> Client::get(const std::vector<std::uint32_t>& ranks, const std::string& key,
                                     ipc::Timeout timeout) {
    Impl* impl = impl_.get();
    std::vector<std::function<Got()>> gets;
    for (const std::uint32_t rank : ranks) {
        if (impl->abandoned_gets.count(rank) != 0) {
            gets.emplace_back([] {
                return Got{std::nullopt, {false, "an earlier PMIx_Get of this rank never returned"}};
            });
            continue;
        }
        gets.emplace_back([impl, rank, key, timeout] {
            pmix_proc_t proc{};
            std::memcpy(proc.nspace, impl->self.nspace, sizeof proc.nspace);
            proc.rank = rank;
            pmix_info_t info[1] = {timeout_info(timeout)};
            pmix_value_t* v = nullptr;
            const pmix_status_t s = impl->get(&proc, key.c_str(), info, 1, &v);
            Got out;
            if (s != PMIX_SUCCESS) {
                out.why = {false, impl->why(s)};
            } else if (v == nullptr || v->type != PMIX_STRING || v->data.string == nullptr) {
                out.why = {false, "the value is not a string"};
            } else {
                out.value = std::string(v->data.string);
            }
            impl->release(v);
            return out;
        });
    }
    std::vector<Got> got;
    for (std::size_t first = 0; first < gets.size(); first += kGetsAtOnce) {
        const std::size_t end = std::min(gets.size(), first + kGetsAtOnce);
        std::vector<std::function<Got()>> batch(gets.begin() + static_cast<std::ptrdiff_t>(first),
                                                gets.begin() + static_cast<std::ptrdiff_t>(end));
        std::vector<std::optional<Got>> answers;
        try {
            answers = call_all_within<Got>(timeout + kGrace, std::move(batch));
        } catch (const std::system_error& e) {
            throw Error(ExitCode::failed, fmt::format("cannot start a thread for PMIx_Get: {}", e.what()),
                        "raise the process or thread limit of the job (ulimit -u, the container's pids limit)");
        }
        for (std::size_t i = 0; i < answers.size(); ++i) {
            if (answers[i]) {
                got.push_back(std::move(*answers[i]));
                continue;
            }
            impl_->abandoned_gets.insert(ranks[first + i]);
            got.push_back({std::nullopt,
                           {false, fmt::format("PMIx_Get did not return within {} (given up)",
                                               ipc::describe(timeout + kGrace))}});
        }
    }
    return got;
}

#else  // no PMIx header at build time

struct Client::Impl {};

Client Client::connect(const std::string& library) {
    (void)candidates(library);
    throw Error(ExitCode::unavailable, "this cumemctl was built without PMIx (no pmix.h from libpmix-dev)",
                no_pmix_remedy());
}
const std::string& Client::library() const {
    static const std::string none;
    return none;
}
const std::string& Client::version() const {
    return library();
}
const std::string& Client::nspace() const {
    return library();
}
std::uint32_t Client::rank() const {
    return 0;
}
std::uint32_t Client::job_size() const {
    return 0;
}
std::optional<std::uint32_t> Client::local_rank() const {
    return std::nullopt;
}
void Client::put(const std::string&, const std::string&) {}
void Client::commit() {}
Outcome Client::fence(ipc::Timeout, const std::vector<std::uint32_t>&) {
    return {false, "no PMIx"};
}
std::vector<Client::Got> Client::get(const std::vector<std::uint32_t>& ranks, const std::string&, ipc::Timeout) {
    return std::vector<Got>(ranks.size(), Got{std::nullopt, {false, "no PMIx"}});
}

#endif

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::Client(Client&&) noexcept = default;
Client::~Client() {
#if CUMEMCTL_HAVE_PMIX
    // A call still waits in the library on a thread of its own: leave the library, and its state, be.
    if (impl_ && (impl_->abandoned() || calls_abandoned()))
        (void)impl_.release();  // NOLINT(bugprone-unused-return-value)
#endif
}

}  // namespace cumemctl::pmix
