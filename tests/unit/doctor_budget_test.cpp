// doctor's time budget (src/doctor/budget): the run as it stood at the budget, the waiting call named.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "base/pending.hpp"
#include "doctor/budget.hpp"

using namespace cumemctl;
using namespace cumemctl::doctor;

TEST_CASE("run_within_budget: a run that ends in time is its own; one that does not is timeout, the call named") {
    auto progress = std::make_shared<Progress>();
    progress->plan({"driver", "devices"}, {"context", "vmm"}, {"imex-channels"});
    const BudgetedRun fast = run_within_budget(5, progress, [] {
        DoctorRun run;
        run.results.push_back(CheckResult{"driver", std::nullopt, CheckOutcome::pass("ok"), 0});
        return run;
    });
    CHECK_FALSE(fast.timed_out);
    CHECK(fast.run.results.size() == 1);

    auto slow = std::make_shared<Progress>();
    slow->plan({"driver", "devices"}, {"context", "vmm"}, {"imex-channels"});
    auto release = std::make_shared<std::promise<void>>();
    std::shared_future<void> released = release->get_future().share();
    const BudgetedRun late = run_within_budget(0.2, slow, [slow, released] {
        slow->begin("driver", std::nullopt);
        slow->finish(CheckResult{"driver", std::nullopt, CheckOutcome::pass("ok"), 0});
        slow->set_devices({0}, 1);
        slow->begin("context", 0);
        const Pending pending("cuDevicePrimaryCtxRetain");
        released.wait();  // a call that does not return within the budget
        return DoctorRun{};
    });
    CHECK(late.timed_out);
    REQUIRE(late.run.results.size() == 5);
    CHECK(late.run.results[0].outcome.status == CheckStatus::pass);
    const CheckResult& devices = late.run.results[1];
    CHECK(devices.outcome.status == CheckStatus::timeout);
    CHECK(devices.outcome.reason == "not started: the time budget of 0.2 s was spent");
    const CheckResult& context = late.run.results[2];
    CHECK(context.check == "context");
    CHECK(context.device == 0);
    CHECK(context.outcome.status == CheckStatus::timeout);
    REQUIRE(context.outcome.evidence_as<TimeoutEvidence>() != nullptr);
    CHECK(context.outcome.evidence_as<TimeoutEvidence>()->pending_call == "cuDevicePrimaryCtxRetain");
    CHECK(context.outcome.reason.find("cuDevicePrimaryCtxRetain has not returned after") != std::string::npos);
    CHECK(context.outcome.brief == "cuDevicePrimaryCtxRetain hung");
    CHECK(late.run.results[3].check == "vmm");
    CHECK(late.run.results[4].check == "imex-channels");
    release->set_value();  // the detached worker ends
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}
