// Unit tests of child processes for the run supervisor: pipes on their descriptors, output tails, ends, kills.
#include "process.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

using parity::ChildProcess;
using parity::OutputTail;

namespace {

ChildProcess shell(const std::string& script) { return ChildProcess({"/bin/sh", "-c", script}); }

// Reads replies until `count` lines arrived or the reply pipe closed (10 s at most).
std::vector<std::string> replies(ChildProcess& child, std::size_t count) {
  std::vector<std::string> lines;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (lines.size() < count && std::chrono::steady_clock::now() < deadline) {
    pollfd fd{child.reply_fd(), POLLIN, 0};
    ::poll(&fd, 1, 100);
    if (!child.read_replies(lines)) break;
  }
  return lines;
}

TEST(OutputTail, KeepsTheLastLinesAndTheUnfinishedOne) {
  OutputTail tail(2);
  const std::string text = "one\ntwo\nthree\nfour";
  tail.append(text.data(), 5);  // split inside a line
  tail.append(text.data() + 5, text.size() - 5);
  EXPECT_EQ(tail.text(), "two\nthree\nfour");
  tail.clear();
  EXPECT_EQ(tail.text(), "");
}

TEST(OutputTail, TheRestartLineDropsWhatCameBeforeIt) {
  OutputTail tail(5);
  const std::string text = std::string("last scenario's\n") + parity::kOutputRestart + "\nthis one's\nunfinished";
  tail.append(text.data(), 20);  // the restart line arrives split, as a pipe may deliver it
  tail.append(text.data() + 20, text.size() - 20);
  EXPECT_EQ(tail.text(), "this one's\nunfinished");
}

TEST(DescribeWaitStatus, NamesExitCodesAndSignals) {
  EXPECT_EQ(parity::describe_wait_status(3 << 8), "exit code 3");
  EXPECT_EQ(parity::describe_wait_status(SIGSEGV), "signal 11 (SIGSEGV)");
  EXPECT_EQ(parity::describe_wait_status(SIGABRT), "signal 6 (SIGABRT)");
}

TEST(ChildProcess, CommandsGoInOnDescriptor4AndRepliesComeOutOn3) {
  ChildProcess child = shell("while read line <&4; do echo \"got $line\" >&3; done");
  ASSERT_TRUE(child.send_line("a"));
  ASSERT_TRUE(child.send_line("b"));
  EXPECT_EQ(replies(child, 2), (std::vector<std::string>{"got a", "got b"}));
  EXPECT_EQ(child.finish(5.0), "exit code 0");  // end of commands ends the loop
}

TEST(ChildProcess, StdoutAndStderrReachTheTailAndStdinIsEmpty) {
  ChildProcess child = shell("read x; echo \"stdin gave [$x]\"; echo to-stderr >&2; echo done >&3");
  EXPECT_EQ(replies(child, 1), std::vector<std::string>{"done"});
  EXPECT_EQ(child.wait_end(), "exit code 0");
  EXPECT_EQ(child.output().text(), "stdin gave []\nto-stderr\n");
}

TEST(ChildProcess, ADeathBySignalIsNamedAndItsLastOutputKept) {
  ChildProcess child = shell("echo last words; kill -SEGV $$");
  EXPECT_TRUE(replies(child, 1).empty());  // the reply pipe closes without a reply
  EXPECT_EQ(child.wait_end(), "signal 11 (SIGSEGV)");
  EXPECT_EQ(child.output().text(), "last words\n");
}

TEST(ChildProcess, KillGroupStopsTheChildAndWhatItStarted) {
  ChildProcess child = shell("sleep 60 & echo started >&3; wait");
  ASSERT_EQ(replies(child, 1), std::vector<std::string>{"started"});
  EXPECT_GT(child.resident_bytes(), 0u);
  const auto before = std::chrono::steady_clock::now();
  child.kill_group();
  EXPECT_EQ(child.wait_end(), "signal 9 (SIGKILL)");
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(30));
}

TEST(ChildProcess, ItsEndIsSeenWhileWhatItStartedHoldsItsPipes) {
  ChildProcess child = shell("sleep 5 & echo started >&3; exit 4");
  ASSERT_EQ(replies(child, 1), std::vector<std::string>{"started"});
  std::vector<std::string> lines;
  for (int i = 0; i < 500 && !child.exited(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(child.exited());
  EXPECT_TRUE(child.read_replies(lines)) << "the sleeping grandchild keeps the reply pipe open";
  EXPECT_EQ(child.wait_end(), "exit code 4");  // the grandchild ends on its own, 5 s later
}

TEST(ChildProcess, ACommandToAChildThatIsGoneFailsInsteadOfRaisingSigpipe) {
  ChildProcess child = shell("exit 0");
  EXPECT_EQ(child.wait_end(), "exit code 0");
  EXPECT_FALSE(child.send_line("anyone?"));
}

TEST(ChildProcess, FinishKillsAChildThatIgnoresTheEndOfItsCommands) {
  ChildProcess child = shell("trap '' TERM; sleep 60");
  EXPECT_EQ(child.finish(0.2), "signal 9 (SIGKILL)");
}

}  // namespace
