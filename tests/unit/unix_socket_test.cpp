#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "base/error.hpp"
#include "util/open_fds.hpp"
#include "util/unix_socket.hpp"

using namespace cumemctl;

TEST_CASE("a message carries bytes and a descriptor that refers to the same file") {
    auto [a, b] = socket_pair();
    FILE* f = std::tmpfile();
    REQUIRE(f != nullptr);
    REQUIRE(std::fputs("shared", f) >= 0);
    std::fflush(f);
    send_message(a.get(), "posix-fd", fileno(f));
    const Message m = receive_message(b.get(), std::chrono::milliseconds(1000));
    CHECK(m.bytes == "posix-fd");
    REQUIRE(m.fd.valid());
    CHECK(m.fd.get() != fileno(f));
    char text[7] = {};
    CHECK(pread(m.fd.get(), text, 6, 0) == 6);
    CHECK(std::string(text) == "shared");
    CHECK((fcntl(m.fd.get(), F_GETFD) & FD_CLOEXEC) != 0);
    std::fclose(f);

    send_message(b.get(), std::string(64, '\x7f'));
    const Message plain = receive_message(a.get(), std::chrono::milliseconds(1000));
    CHECK(plain.bytes.size() == 64);
    CHECK_FALSE(plain.fd.valid());
}

TEST_CASE("receive_message fails on a timeout and on a closed peer") {
    auto [a, b] = socket_pair();
    CHECK_THROWS_WITH_AS(receive_message(a.get(), std::chrono::milliseconds(10)),
                         doctest::Contains("no message within 0.01 s"), MessageTimeout);
    b.reset();
    CHECK_THROWS_WITH_AS(receive_message(a.get(), std::chrono::milliseconds(1000)),
                         doctest::Contains("closed the connection"), Error);
    CHECK_THROWS_AS(send_message(a.get(), "x"), Error);
}

TEST_CASE("open_fds sees a descriptor come and go") {
    const auto before = open_fds();
    const int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    const auto during = open_fds();
    CHECK(during.size() == before.size() + 1);
    CHECK(during.at(fd) == "/dev/null");
    const auto added = new_fds(before, during);
    REQUIRE(added.size() == 1);
    CHECK(added[0] == std::to_string(fd) + " -> /dev/null");
    close(fd);
    CHECK(open_fds() == before);
}
