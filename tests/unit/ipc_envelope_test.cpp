// The message envelope, the Problem wire format and the hex encoding between our processes.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include "ipc/envelope.hpp"
#include "ipc/hex.hpp"
#include "ipc/problem_wire.hpp"
#include "util/unix_socket.hpp"

using namespace cumemctl;
using namespace std::chrono_literals;

TEST_CASE("a Problem survives the wire with its driver failure and device") {
    Problem p;
    p.exit_code = ExitCode::permission;
    p.message = "cuMemCreate failed";
    p.cause = "no IMEX channel";
    p.remedy = "run imex-setup";
    p.device = 2;
    p.driver = DriverFailure{"cuMemCreate", 800, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"};
    const Problem back = ipc::problem_from_json(ipc::problem_to_json(p));
    CHECK(back.exit_code == p.exit_code);
    CHECK(back.message == p.message);
    CHECK(back.cause == p.cause);
    CHECK(back.remedy == p.remedy);
    CHECK(back.device == p.device);
    REQUIRE(back.driver.has_value());
    CHECK(back.driver->call == "cuMemCreate");
    CHECK(back.driver->code == 800);
    CHECK(back.driver->name == "CUDA_ERROR_NOT_PERMITTED");
    CHECK(back.driver->text == "operation not permitted");
    const Problem plain = ipc::problem_from_json(ipc::problem_to_json(Problem{}));
    CHECK_FALSE(plain.driver.has_value());
    CHECK_FALSE(plain.device.has_value());
    CHECK_THROWS_AS(ipc::problem_from_json(nlohmann::json{{"message", "x"}}), nlohmann::json::exception);
}

TEST_CASE("a problem's kind crosses the wire typed, and a kind that is none of them is malformed") {
    Problem busy{.exit_code = ExitCode::unavailable, .message = "held", .kind = ProblemKind::busy};
    nlohmann::json j = ipc::problem_to_json(busy);
    CHECK(j["kind"] == "busy");
    CHECK(ipc::problem_from_json(j).kind == ProblemKind::busy);
    j["kind"] = "unavailable";  // the exit code's own name
    CHECK(ipc::problem_from_json(j).kind == ProblemKind::by_exit_code);
    for (const char* bad : {"permission", "Busy", "", "pass"}) {
        CAPTURE(bad);
        j["kind"] = bad;
        CHECK_THROWS_WITH_AS(ipc::problem_from_json(j), doctest::Contains("kind is neither"),
                             nlohmann::json::exception);
    }
}

TEST_CASE("a problem whose exit code is none of the documented ones is a malformed message") {
    nlohmann::json j = ipc::problem_to_json(Problem{.exit_code = ExitCode::terminated, .message = "stopped"});
    CHECK(ipc::problem_from_json(j).exit_code == ExitCode::terminated);
    for (const nlohmann::json& bad : {nlohmann::json(5), nlohmann::json(-1), nlohmann::json(255), nlohmann::json(129),
                                      nlohmann::json(18446744073709551615ULL), nlohmann::json(4294967297LL),
                                      nlohmann::json(1.5), nlohmann::json("1"), nlohmann::json(nullptr)}) {
        CAPTURE(bad.dump());
        j["exit_code"] = bad;
        CHECK_THROWS_AS(ipc::problem_from_json(j), nlohmann::json::exception);
    }
    // Read strictly, as the one decoder of both the envelope and fabric-matrix's files.
    j = ipc::problem_to_json(Problem{.message = "x", .device = 1});
    j["extra"] = 1;
    CHECK_THROWS_WITH_AS(ipc::problem_from_json(j), doctest::Contains("unknown field 'extra'"),
                         nlohmann::json::exception);
    j.erase("extra");
    j["device"] = -1;
    CHECK_THROWS_WITH_AS(ipc::problem_from_json(j), doctest::Contains("device -1"), nlohmann::json::exception);
    j["device"] = 1;
    CHECK(ipc::problem_from_json(j).device == 1);
    j["exit_code"] = 1;
    // Through the envelope, the malformed problem is an error that says so, never a wrong exit code.
    ipc::Envelope e;
    e.problem = Problem{.exit_code = ExitCode::failed, .message = "x"};
    nlohmann::json wire = ipc::to_json(e);
    wire["problem"]["exit_code"] = 7;
    try {
        ipc::envelope_from_json(wire);
        FAIL("a malformed envelope was accepted");
    } catch (const Error& err) {
        CHECK(err.exit_code() == ExitCode::failed);
        CHECK(std::string(err.what()).find("exit_code 7 is none of cumemctl's exit codes") != std::string::npos);
    }
}

TEST_CASE("exit_code_from_number knows exactly the documented exit codes") {
    CHECK(exit_code_from_number(0) == ExitCode::ok);
    CHECK(exit_code_from_number(1) == ExitCode::failed);
    CHECK(exit_code_from_number(2) == ExitCode::usage);
    CHECK(exit_code_from_number(3) == ExitCode::unavailable);
    CHECK(exit_code_from_number(4) == ExitCode::permission);
    CHECK(exit_code_from_number(130) == ExitCode::interrupted);
    CHECK(exit_code_from_number(143) == ExitCode::terminated);
    for (const long long n : {-1LL, 5LL, 70LL, 128LL, 131LL, 256LL + 1, 1LL << 40}) {
        CAPTURE(n);
        CHECK_FALSE(exit_code_from_number(n).has_value());
    }
}

TEST_CASE("an envelope crosses a socket with its steps, problem, result and descriptor") {
    auto [a, b] = socket_pair();
    ipc::Envelope e;
    e.steps.push_back(
        {"import", "cuMemImportFromShareableHandle", 0, "CUDA_SUCCESS", true, 0.1, "fd", false, "importer"});
    e.problem = Problem{
        .exit_code = ExitCode::failed, .message = "it broke", .cause = "why", .remedy = "what to do", .device = 1};
    e.result = {{"answer", 42}};
    const UniqueFd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    ipc::send_envelope(a.get(), e, devnull.get());
    const ipc::Envelope got = ipc::receive_envelope(b.get(), 1000ms);
    REQUIRE(got.steps.size() == 1);
    CHECK(got.steps[0].name == "import");
    CHECK(got.steps[0].process == "importer");
    REQUIRE(got.problem.has_value());
    CHECK(got.problem->message == "it broke");
    CHECK(got.problem->device == 1);
    CHECK(got.result["answer"] == 42);
    CHECK(got.fd.valid());

    ipc::send_envelope(a.get(), ipc::Envelope{});
    const ipc::Envelope empty = ipc::receive_envelope(b.get(), 1000ms);
    CHECK(empty.steps.empty());
    CHECK_FALSE(empty.problem.has_value());
    CHECK(empty.result.is_null());
    CHECK_FALSE(empty.fd.valid());
}

TEST_CASE("a request crosses a socket with its service, fields and descriptor, and is no envelope") {
    auto [a, b] = socket_pair();
    const UniqueFd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    ipc::send_request(a.get(), ipc::Request{"import-check", {{"size", 4096}}, {}}, devnull.get());
    const ipc::Request got = ipc::receive_request(b.get(), 1000ms);
    CHECK(got.service == "import-check");
    CHECK(got.fields["size"] == 4096);
    CHECK(got.fd.valid());
    // Each side decodes only its own kind of message.
    ipc::send_request(a.get(), ipc::Request{"import-check", {}, {}});
    CHECK_THROWS_WITH_AS(ipc::receive_envelope(b.get(), 1000ms), doctest::Contains("malformed"), Error);
    ipc::send_envelope(a.get(), ipc::Envelope{});
    CHECK_THROWS_WITH_AS(ipc::receive_request(b.get(), 1000ms), doctest::Contains("malformed request"), Error);
    send_message(a.get(), R"({"service": "x", "fields": 7})");
    CHECK_THROWS_WITH_AS(ipc::receive_request(b.get(), 1000ms), doctest::Contains("not an object"), Error);
    // A peer that closes its end has no request left.
    a.reset();
    CHECK_FALSE(ipc::receive_request_or_end(b.get(), 1000ms).has_value());
}

TEST_CASE("receive_envelope fails on a timeout and on a message that is no envelope") {
    auto [a, b] = socket_pair();
    CHECK_THROWS_WITH_AS(ipc::receive_envelope(b.get(), 10ms), doctest::Contains("no message within"), Error);
    send_message(a.get(), "not json");
    CHECK_THROWS_WITH_AS(ipc::receive_envelope(b.get(), 1000ms), doctest::Contains("not JSON"), Error);
    send_message(a.get(), R"({"steps": []})");
    CHECK_THROWS_WITH_AS(ipc::receive_envelope(b.get(), 1000ms), doctest::Contains("malformed"), Error);
}

TEST_CASE("hex encodes bytes and refuses what is not hex of the right length") {
    const unsigned char bytes[] = {0x00, 0x7f, 0xab, 0xff};
    CHECK(ipc::to_hex(bytes, sizeof bytes) == "007fabff");
    unsigned char back[4] = {};
    ipc::from_hex("007FABff", back, sizeof back);
    CHECK(std::equal(back, back + 4, bytes));
    CHECK_THROWS_AS(ipc::from_hex("007fab", back, sizeof back), Error);
    CHECK_THROWS_AS(ipc::from_hex("007fabzz", back, sizeof back), Error);
}
