// The one step model: recording in each style, undo steps, the JSON round trip and the table.
#include <doctest/doctest.h>

#include "driver_table.hpp"
#include "steps/step_json.hpp"
#include "steps/step_log.hpp"

using namespace cumemctl;

namespace {

CUresult steps_test_ok(int) {
    return CUDA_SUCCESS;
}
CUresult steps_test_fails(int) {
    return CUDA_ERROR_INVALID_VALUE;
}

}  // namespace

TEST_CASE("StepLog::time records each step, lets a failure be diagnosed and rethrows it") {
    bool diagnosed = false;
    StepLog log([&](Problem& p) {
        diagnosed = true;
        p.cause = "because";
    });
    CHECK(log.time("one", "cuOne", [] { return 7; }) == 7);
    Problem failure;
    failure.message = "two failed";
    failure.driver = DriverFailure{"cuTwo", 1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"};
    try {
        log.time("two", "cuTwo", [&] { throw Error(failure); });
        FAIL("no throw");
    } catch (const Error& e) {
        CHECK(e.problem().cause == "because");
    }
    CHECK(diagnosed);
    REQUIRE(log.steps().size() == 2);
    CHECK(log.steps()[0].ok);
    CHECK(log.steps()[0].call == "cuOne");
    CHECK_FALSE(log.steps()[1].ok);
    CHECK(log.steps()[1].result == 1);
    CHECK(log.steps()[1].result_name == "CUDA_ERROR_INVALID_VALUE");
    CHECK(log.passed());  // time() rethrows; the caller keeps the problem
}

TEST_CASE("StepLog::attempt keeps the first problem and the message as the failed step's detail") {
    StepLog log({}, "exporter");
    CHECK(log.attempt("first", [] { return std::string("fine"); }));
    CHECK_FALSE(log.attempt("second", []() -> std::string { throw Error(ExitCode::failed, "second broke"); }));
    CHECK_FALSE(log.attempt("third", []() -> std::string { throw Error(ExitCode::usage, "third broke"); }));
    REQUIRE(log.steps().size() == 3);
    CHECK(log.steps()[0].detail == "fine");
    CHECK(log.steps()[0].process == "exporter");
    CHECK(log.steps()[1].detail == "second broke");
    REQUIRE(log.problem().has_value());
    CHECK(log.problem()->message == "second broke");
    CHECK_FALSE(log.passed());
    log.append({steps::Step{"theirs", "", std::nullopt, "", true, 0.5, "", false, "importer"}});
    CHECK(log.steps().back().process == "importer");
}

TEST_CASE("StepLog::call and undo record the driver's answer; an undo failure is kept, not thrown") {
    const DriverApi api = testing_driver::table();
    StepLog log(api, [](Problem& p) { p.remedy = "do this"; });
    CHECK(log.call("good", "cuMemCreate", steps_test_ok, 1).result_name == "CUDA_SUCCESS");
    CHECK_THROWS_WITH_AS(log.call("bad", "cuMemMap", steps_test_fails, 1), doctest::Contains("bad: cuMemMap failed"),
                         Error);
    log.undo("undo good", "cuMemUnmap", steps_test_ok, 1);
    log.undo("undo bad", "cuMemRelease", steps_test_fails, 1);
    CUresult (*missing)(int) = nullptr;
    log.undo("undo missing", "cuMemAddressFree", missing, 1);
    REQUIRE(log.steps().size() == 5);
    CHECK_FALSE(log.steps()[1].ok);
    CHECK(log.steps()[1].result == static_cast<int>(CUDA_ERROR_INVALID_VALUE));
    CHECK(log.steps()[2].undo);
    CHECK(log.steps()[2].ok);
    CHECK_FALSE(log.steps()[3].ok);
    CHECK(log.steps()[4].detail == "the driver lacks this entry point");
    REQUIRE(log.undo_failures().size() == 2);
    CHECK(log.undo_failures()[0].message.rfind("cleanup: undo bad", 0) == 0);
}

TEST_CASE("a missing entry point gives one message, with the table's version, through CU_CALL and StepLog::call") {
    static_assert(entry_version("cuMemPoolTrimTo") == 11020);
    static_assert(EntryPoint("cuLogicalEndpointQuery").version == 13030);
    DriverApi api = testing_driver::table();
    api.cuMemPoolTrimTo = nullptr;
    const std::string expected = "this driver has no cuMemPoolTrimTo (it needs CUDA 11.2)";
    std::string from_macro;
    try {
        CU_CALL(api, cuMemPoolTrimTo, CUmemoryPool{}, size_t{0});
        FAIL("CU_CALL called a missing entry point");
    } catch (const Error& e) {
        from_macro = e.problem().message;
        CHECK(e.problem().exit_code == ExitCode::unavailable);
    }
    CHECK(from_macro == expected);
    CHECK_THROWS_WITH_AS(CU_REQUIRE(api, cuMemPoolTrimTo), expected.c_str(), Error);
    bool diagnosed = false;
    StepLog log(api, [&](Problem&) { diagnosed = true; });
    std::string from_log;
    try {
        log.call("trim", "cuMemPoolTrimTo", api.cuMemPoolTrimTo, CUmemoryPool{}, size_t{0});
        FAIL("StepLog::call called a missing entry point");
    } catch (const Error& e) {
        from_log = e.problem().message;
        CHECK(e.problem().exit_code == ExitCode::unavailable);
    }
    CHECK(from_log == expected);
    CHECK(log.steps().empty());  // nothing was called
}

TEST_CASE("a step survives the JSON round trip with every key present") {
    steps::Step s{
        "import",  "cuMemImportFromShareableHandle", 1, "CUDA_ERROR_INVALID_VALUE", false, 0.25, "from fd 5", true,
        "importer"};
    const nlohmann::json j = steps::to_json(s);
    for (const char* key : {"step", "call", "result", "code", "ok", "seconds", "detail", "undo", "process"}) {
        CHECK(j.contains(key));
    }
    const steps::Step back = steps::step_from_json(j);
    CHECK(back.name == s.name);
    CHECK(back.call == s.call);
    CHECK(back.result == s.result);
    CHECK(back.result_name == s.result_name);
    CHECK(back.ok == s.ok);
    CHECK(back.seconds == s.seconds);
    CHECK(back.detail == s.detail);
    CHECK(back.undo == s.undo);
    CHECK(back.process == s.process);
    const steps::Step plain{"note", "", std::nullopt, "", true, 0, "", false, ""};
    CHECK(steps::to_json(plain)["code"].is_null());
    for (const char* none : {"call", "result", "detail", "process"}) CHECK(steps::to_json(plain)[none].is_null());
    CHECK_FALSE(steps::step_from_json(steps::to_json(plain)).result.has_value());
    CHECK(steps::steps_from_json(steps_json({s, plain})).size() == 2);
    CHECK_THROWS_AS(steps::step_from_json(nlohmann::json{{"step", "x"}}), nlohmann::json::exception);
}

TEST_CASE("the steps table has one set of columns, with process only when a second process is in it") {
    steps::Step mine{"create", "cuMemCreate", 0, "CUDA_SUCCESS", true, 0.0012345, "", false, ""};
    steps::Step failed{"map", "cuMemMap", std::nullopt, "", false, 0, "", false, ""};
    const Table t = steps_table("Steps", {mine, failed});
    CHECK(t.columns == std::vector<std::string>{"step", "call", "result", "time", "detail"});
    CHECK(cell_texts(t.rows[0]) == std::vector<std::string>{"create", "cuMemCreate", "ok", "1.23 ms", ""});
    CHECK(t.rows[0][2].tone == Tone::good);
    CHECK(t.rows[1][2].text == "fail");
    CHECK(t.rows[1][2].tone == Tone::bad);
    CHECK(t.rows[1][0].tone == Tone::plain);
    steps::Step theirs = mine;
    theirs.process = "importer";
    const Table both = steps_table("Steps", {mine, theirs});
    CHECK(both.columns.front() == "process");
    CHECK(both.rows[0][0].text == "-");
    CHECK(both.rows[1][0].text == "importer");
}
