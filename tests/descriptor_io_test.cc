// Unit tests of write_all and read_all: whole transfers over pipes and sockets, and a closed other end as false.
#include "descriptor_io.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <string>
#include <thread>

using parity::read_all;
using parity::write_all;

namespace {

// Both ends of a pipe or socket pair, closed at the end.
struct Ends {
  int fd[2] = {-1, -1};
  ~Ends() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close(int end) {
    ::close(fd[end]);
    fd[end] = -1;
  }
};

// More than a pipe's or socket's buffer, so that writes and reads come short and must be taken up again.
std::string large_text() {
  std::string text(1 << 22, '\0');
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>(i * 7 + i / 4096);
  return text;
}

void transfers_whole(Ends& ends) {
  const std::string sent = large_text();
  std::string got(sent.size(), '\0');
  bool read_ok = false;
  std::thread reader([&] { read_ok = read_all(ends.fd[0], got.data(), got.size()); });
  EXPECT_TRUE(write_all(ends.fd[1], sent.data(), sent.size()));
  reader.join();
  EXPECT_TRUE(read_ok);
  EXPECT_EQ(got, sent);
}

TEST(DescriptorIo, APipeCarriesMoreThanItsBufferWhole) {
  Ends pipe_ends;
  ASSERT_EQ(::pipe(pipe_ends.fd), 0);
  transfers_whole(pipe_ends);
}

TEST(DescriptorIo, ASocketCarriesMoreThanItsBufferWhole) {
  Ends socket_ends;
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, socket_ends.fd), 0);
  transfers_whole(socket_ends);
}

TEST(DescriptorIo, AnEndBeforeTheWholeIsFalse) {
  Ends ends;
  ASSERT_EQ(::pipe(ends.fd), 0);
  ASSERT_TRUE(write_all(ends.fd[1], "abc", 3));
  ends.close(1);
  char got[4];
  EXPECT_FALSE(read_all(ends.fd[0], got, sizeof got));
}

// compare's fan-out writes to children that may have died: that must be a false, not a SIGPIPE killing the parent.
TEST(DescriptorIo, ASocketClosedAtTheOtherEndIsFalseNotASignal) {
  const auto previous = std::signal(SIGPIPE, SIG_DFL);
  Ends ends;
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, ends.fd), 0);
  ends.close(0);
  errno = 0;
  EXPECT_FALSE(write_all(ends.fd[1], "abc", 3));
  EXPECT_EQ(errno, EPIPE);
  std::signal(SIGPIPE, previous);
}

}  // namespace
