#include <doctest/doctest.h>

#include <sstream>

#include "cuda/driver_call.hpp"
#include "driver_table.hpp"
#include "fixed_views.hpp"
#include "report/renderer.hpp"

using namespace cumemctl;

TEST_CASE("the first error decides the exit code and warnings keep it") {
    Report r;
    r.command = "devices";
    r.add_warning("careful");
    CHECK(r.ok());
    r.add_error(Problem{.exit_code = ExitCode::unavailable, .message = "no driver", .remedy = "install it"});
    r.add_error(Problem{.exit_code = ExitCode::failed, .message = "second"});
    CHECK(r.exit_code == ExitCode::unavailable);
    const auto j = to_json(r);
    CHECK(j["ok"] == false);
    CHECK(j["exit_code"] == 3);
    CHECK(j["errors"].size() == 2);
    CHECK(j["errors"][0]["remedy"] == "install it");
    CHECK(j["warnings"][0]["message"] == "careful");
    CHECK(j["schema"] == kSchemaName);
    CHECK(j["driver"]["loaded"] == false);
}

TEST_CASE("check turns a CUresult into an error that names the call") {
    const auto api = testing_driver::table();
    try {
        check(api, CUDA_ERROR_INVALID_VALUE, "cuMemCreate");
        FAIL("no throw");
    } catch (const Error& e) {
        REQUIRE(e.problem().driver.has_value());
        CHECK(e.problem().driver->call == "cuMemCreate");
        CHECK(e.problem().driver->code == 1);
        CHECK(e.problem().driver->name == "CUDA_ERROR_INVALID_VALUE");
        CHECK(e.exit_code() == ExitCode::failed);
    }
    CHECK(exit_code_for(CUDA_ERROR_NOT_PERMITTED) == ExitCode::permission);
    CHECK(exit_code_for(CUDA_ERROR_NOT_SUPPORTED) == ExitCode::unavailable);
    CHECK_NOTHROW(check(api, CUDA_SUCCESS, "cuInit"));
}

TEST_CASE("the table renderer aligns columns and the problem writer gives the remedy") {
    Table t{"Title", {"a", "long heading"}, {{"wide cell", "x"}}, {"a note"}};
    std::ostringstream out;
    render_table(t, out, false);
    CHECK(out.str() == "Title\n  a          long heading\n  wide cell  x\n  a note\n");
    Report r;
    r.add_error(Problem{.exit_code = ExitCode::usage, .message = "bad size", .remedy = "use 2MiB"});
    std::ostringstream err;
    write_problems(r, err);
    CHECK(err.str() == "cumemctl: error: bad size\n  hint: use 2MiB\n");
}

TEST_CASE("a wrapping table breaks its last column and notes at spaces to fit the width") {
    Table t{"T",
            {"a", "reason"},
            {{"x", "one two three four five six seven eight nine ten eleven twelve"}},
            {"a long note that will need to wrap somewhere around here"},
            true};
    std::ostringstream out;
    render_table(t, out, false, 30);
    CHECK(out.str() ==
          "T\n"
          "  a  reason\n"
          "  x  one two three four five\n"
          "     six seven eight nine ten\n"
          "     eleven twelve\n"
          "  a long note that will\n"
          "      need to wrap somewhere\n"
          "      around here\n");
}

TEST_CASE("where the other columns leave the last one too little room, it goes below its row") {
    // 2 + 23 + 2 + 4 + 2 = 33 columns before the last: at 40 "two words" does not fit, so it goes below.
    Table t{"T",
            {"step", "time", "detail"},
            {{"a step with a long name", "1 us", "two words"}, {"short", "2 us", ""}},
            {},
            true};
    std::ostringstream out;
    render_table(t, out, false, 40);
    CHECK(out.str() ==
          "T\n"
          "  step" +
              std::string(21, ' ') +
              "time\n"
              "  a step with a long name  1 us\n"
              "      two words\n"
              "  short" +
              std::string(20, ' ') + "2 us\n");
    // Where the last column fits after all, it stays in its row.
    t.rows = {{"a step with a long name", "1 us", "two"}};
    std::ostringstream fits;
    render_table(t, fits, false, 40);
    CHECK(fits.str() == "T\n  step" + std::string(21, ' ') + "time  detail\n  a step with a long name  1 us  two\n");
}

TEST_CASE("a quoted command is never broken, width 0 wraps nothing, and apostrophes open nothing") {
    Table t{
        "T", {"a", "remedy"}, {{"x", "run 'cumemctl imex-setup --owner USER' as root, the driver's way"}}, {}, true};
    std::ostringstream out;
    render_table(t, out, false, 30);
    CHECK(out.str() ==
          "T\n"
          "  a  remedy\n"
          "  x  run\n"
          "     'cumemctl imex-setup --owner USER'\n"
          "     as root, the driver's way\n");
    std::ostringstream whole;
    render_table(t, whole, false, 0);
    CHECK(whole.str() == "T\n  a  remedy\n  x  run 'cumemctl imex-setup --owner USER' as root, the driver's way\n");
}

TEST_CASE("the table renderer writes raw text, then a blank line, then the tables") {
    Report r;
    FixedViews views;
    views.fixed_text = "#!/bin/sh\n";
    views.fixed_tables.push_back(Table{"T", {}, {}, {"n"}});
    r.set_results(std::move(views));
    std::ostringstream out;
    TableRenderer{}.render(r, out);
    CHECK(out.str() == "#!/bin/sh\n\nT\n  n\n");
}

TEST_CASE("the views come from the results; a report without results still says its error") {
    auto render = [](const Renderer& renderer, const Report& r) {
        std::ostringstream out;
        renderer.render(r, out);
        return out.str();
    };
    Report early;
    early.command = "devices";
    early.add_error(Problem{.exit_code = ExitCode::usage, .message = "invalid --device 'x'"});
    CHECK(render(TableRenderer{}, early).empty());  // the error goes to stderr
    CHECK(render(LineRenderer{}, early) == "cumemctl: error invalid --device 'x'\n");
    const std::string gauges = render(PrometheusRenderer{}, early);
    CHECK(gauges.find("cumemctl_report_exit_code{command=\"devices\"} 2\n") != std::string::npos);
    CHECK(gauges.find("cumemctl_device") == std::string::npos);

    Report done;
    done.command = "devices";
    CHECK(render(LineRenderer{}, done) == "cumemctl: ok\n");
    FixedViews views;
    views.fixed_line = "cumemctl: pass 3 checks";
    views.fixed_tables.push_back(Table{"Devices", {"gpu"}, {{"0"}}, {}});
    views.fixed_metrics.push_back({"devices", "CUDA devices", {}, 1});
    done.set_results(std::move(views));
    CHECK(render(LineRenderer{}, done) == "cumemctl: pass 3 checks\n");
    CHECK(render(TableRenderer{}, done) == "Devices\n  gpu\n  0\n");
    CHECK(render(PrometheusRenderer{}, done).find("cumemctl_devices 1\n") != std::string::npos);
}
