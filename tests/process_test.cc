// Unit tests of child processes for the run supervisor: pipes on their descriptors, output tails, ends, kills.
#include "process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "outcome.h"
using parity::ChildProcess;
using parity::OutputTail;

namespace {

// bash, not sh: dash cannot redirect descriptors above 9, and the protocol's are 200 (replies) and 201 (commands).
ChildProcess shell(const std::string& script) { return ChildProcess({"/bin/bash", "-c", script}); }

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
  const std::string text =
      std::string("last scenario's\n") + parity::protocol::kOutputRestart + "\nthis one's\nunfinished";
  tail.append(text.data(), 20);  // the restart line arrives split, as a pipe may deliver it
  tail.append(text.data() + 20, text.size() - 20);
  EXPECT_EQ(tail.text(), "this one's\nunfinished");
}

TEST(DescribeWaitStatus, NamesExitCodesAndSignals) {
  EXPECT_EQ(parity::describe_wait_status(3 << 8), "exit code 3");
  EXPECT_EQ(parity::describe_wait_status(SIGSEGV), "signal 11 (SIGSEGV)");
  EXPECT_EQ(parity::describe_wait_status(SIGABRT), "signal 6 (SIGABRT)");
}

// Whether `pid` is gone (or a zombie nobody reaped yet: ended all the same).
bool gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const std::size_t close = text.rfind(')');
  return close != std::string::npos && text.compare(close, 4, ") Z ") == 0;
}

bool gone_within(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!gone(pid) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return gone(pid);
}

TEST(ChildProcess, CommandsGoInOnDescriptor201AndRepliesComeOutOn200AndTheLowOnesAreFree) {
  static_assert(parity::protocol::kReplyFd == 200 && parity::protocol::kCommandFd == 201);
  ChildProcess child = shell("exec 3>&- 4<&-; while read line <&201; do echo \"got $line\" >&200; done");
  ASSERT_TRUE(child.send_line("a"));
  ASSERT_TRUE(child.send_line("b"));
  EXPECT_EQ(replies(child, 2), (std::vector<std::string>{"got a", "got b"}));
  EXPECT_EQ(child.finish(5.0), "exit code 0");  // end of commands ends the loop
}

TEST(ChildProcess, StdoutAndStderrReachTheTailAndStdinIsEmpty) {
  ChildProcess child = shell("read x; echo \"stdin gave [$x]\"; echo to-stderr >&2; echo done >&200");
  EXPECT_EQ(replies(child, 1), std::vector<std::string>{"done"});
  EXPECT_EQ(child.wait_end(10.0), "exit code 0");
  EXPECT_EQ(child.output().text(), "stdin gave []\nto-stderr\n");
}

TEST(ChildProcess, ADeathBySignalIsNamedAndItsLastOutputKept) {
  ChildProcess child = shell("echo last words; kill -SEGV $$");
  EXPECT_TRUE(replies(child, 1).empty());  // the reply pipe closes without a reply
  EXPECT_EQ(child.wait_end(10.0), "signal 11 (SIGSEGV)");
  EXPECT_EQ(child.output().text(), "last words\n");
}

TEST(ChildProcess, KillGroupStopsTheChildAndWhatItStarted) {
  ChildProcess child = shell("sleep 60 & echo started >&200; wait");
  ASSERT_EQ(replies(child, 1), std::vector<std::string>{"started"});
  EXPECT_GT(child.resident_bytes(), 0u);
  const auto before = std::chrono::steady_clock::now();
  child.kill();
  EXPECT_EQ(child.wait_end(0), "signal 9 (SIGKILL)");
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(30));
}

TEST(ChildProcess, ItsEndKillsWhatItLeftInItsGroup) {
  ChildProcess child = shell("sleep 60 & echo $! >&200; exit 4");
  const std::vector<std::string> lines = replies(child, 1);
  ASSERT_EQ(lines.size(), 1u);
  const pid_t grandchild = std::stoi(lines[0]);
  for (int i = 0; i < 500 && !child.exited(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(child.exited());
  EXPECT_EQ(child.wait_end(0), "exit code 4");
  EXPECT_TRUE(gone_within(grandchild, std::chrono::seconds(10))) << "the sleep its script started outlived it";
}

TEST(ChildProcess, AChildThatLeftItsProcessGroupIsStillKilled) {
  // It joins this test's own group: a kill of its former group alone would miss it, and waiting for it would hang.
  ChildProcess child({"/usr/bin/env", "python3", "-c",
                      "import os, time; os.setpgid(0, os.getpgid(os.getppid())); os.write(200, b'moved\\n'); "
                      "time.sleep(60)"});
  ASSERT_EQ(replies(child, 1), std::vector<std::string>{"moved"});
  const auto before = std::chrono::steady_clock::now();
  EXPECT_EQ(child.wait_end(0.1), "signal 9 (SIGKILL)");
  EXPECT_TRUE(child.was_killed());
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(15));
}

TEST(ChildProcess, AClosedReplyPipeIsItsEndOfFileWhileItRunsOnAndWaitingForItHasADeadline) {
  ChildProcess child = shell("exec 200>&-; sleep 60");
  std::vector<std::string> lines;
  bool open = true;
  for (int i = 0; i < 500 && open; ++i) {
    pollfd fd{child.reply_fd(), POLLIN, 0};
    ::poll(&fd, 1, 20);
    open = child.read_replies(lines);
  }
  EXPECT_FALSE(open);
  EXPECT_FALSE(child.exited());
  EXPECT_EQ(child.wait_end(0.2), "signal 9 (SIGKILL)");
  EXPECT_TRUE(child.was_killed());
}

TEST(ChildProcess, ACommandTheChildDoesNotReadNeverBlocksTheSender) {
  ChildProcess child = shell("sleep 60");
  const auto before = std::chrono::steady_clock::now();
  EXPECT_TRUE(child.send_line(std::string(1 << 20, 'x')));  // far more than a pipe holds: the rest waits here
  EXPECT_TRUE(child.flush_commands());
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(5));
  EXPECT_EQ(child.finish(0.1), "signal 9 (SIGKILL)");
}

// Review finding: a scenario printing 100 kB waited 100 ms on a full 64 KiB pipe, its output unread until the next
// reply (Supervisor::poll_workers), and that wait counted in its seconds and against its timeout.
TEST(ChildProcess, ItsOutputPipeHoldsWhatTheSystemAllowsUpToAMebibyte) {
  ChildProcess child = shell("sleep 60");
  std::ifstream max_file("/proc/sys/fs/pipe-max-size");
  long max_size = parity::kOutputPipeBytes;
  max_file >> max_size;
  EXPECT_GE(::fcntl(child.output_fd(), F_GETPIPE_SZ), std::min<long>(max_size, parity::kOutputPipeBytes));
  EXPECT_EQ(child.finish(0.1), "signal 9 (SIGKILL)");
}

TEST(ChildProcess, AnOverlongReplyLineIsRefused) {
  ChildProcess child({"/bin/bash", "-c", "head -c 300000 /dev/zero >&200; sleep 60"}, 100000);
  std::vector<std::string> lines;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool refused = false;
  while (!refused && std::chrono::steady_clock::now() < deadline) {
    pollfd fd{child.reply_fd(), POLLIN, 0};
    ::poll(&fd, 1, 100);
    try {
      child.read_replies(lines);
    } catch (const std::length_error&) {
      refused = true;
    }
  }
  EXPECT_TRUE(refused);
  EXPECT_TRUE(lines.empty());
}

TEST(OrphanReaper, KillsTheDaemonsAChildLeftBehindEvenInAnotherSession) {
  pid_t daemon = -1;
  {
    parity::OrphanReaper reaper;
    // A double fork into a new session: the script's subshell ends at once, so the daemon's parent is gone. The
    // daemon itself names its pid once setsid ran: named by the subshell ($!), it could still be in the script's
    // group when the script's end kills that group, and die there instead of being left to the reaper.
    ChildProcess child = shell("(setsid bash -c 'echo $$ >&200; exec 200>&- sleep 60' >/dev/null 2>&1 &); exit 0");
    const std::vector<std::string> lines = replies(child, 1);
    ASSERT_EQ(lines.size(), 1u);
    daemon = std::stoi(lines[0]);
    EXPECT_EQ(child.wait_end(5.0), "exit code 0");
    EXPECT_FALSE(gone(daemon)) << "nothing has killed it yet";
  }
  EXPECT_TRUE(gone(daemon)) << "the reaper's end did not kill the daemon";
  EXPECT_NE(::kill(daemon, 0), 0) << "and reaped it";
}
TEST(ChildProcess, ACommandToAChildThatIsGoneFailsInsteadOfRaisingSigpipe) {
  ChildProcess child = shell("exit 0");
  EXPECT_EQ(child.wait_end(10.0), "exit code 0");
  EXPECT_FALSE(child.send_line("anyone?"));
}

TEST(ChildProcess, FinishKillsAChildThatIgnoresTheEndOfItsCommands) {
  ChildProcess child = shell("trap '' TERM; sleep 60");
  EXPECT_EQ(child.finish(0.2), "signal 9 (SIGKILL)");
}

}  // namespace

namespace {

using parity::protocol::parse_reply;
using parity::protocol::ProtocolError;

TEST(Protocol, AcceptsTheEventsAWorkerSends) {
  EXPECT_EQ(parse_reply(R"({"event": "started"})")["event"], "started");
  EXPECT_EQ(parse_reply(R"({"event": "importing", "file": "a.py"})")["file"], "a.py");
  const std::string done = R"({"event": "done", "retiring": false,
      "record": {"id": "m.f", "status": "ok", "file": "results/x", "seconds": 1}})";
  EXPECT_EQ(parse_reply(done)["record"]["id"], "m.f");
  const std::string with_libraries = R"({"event": "done", "retiring": false, "libraries": {"pandas": "3.1.1"},
      "record": {"id": "m.f", "status": "ok", "file": "results/x", "seconds": 1}})";
  EXPECT_EQ(parse_reply(with_libraries)["libraries"]["pandas"], "3.1.1");
  const std::string ready = R"({"event": "ready", "backend": {}, "environment": {}, "errors": [],)"
                            R"( "scenarios": [{"id": "m.f", "meta": {}, "file": "/s/m.py", "part": 0}]})";
  EXPECT_EQ(parse_reply(ready)["scenarios"].size(), 1u);
  EXPECT_TRUE(parse_reply(R"({"event": "fatal", "message": "m", "no_tests": true})")["no_tests"]);
  EXPECT_TRUE(parse_reply(R"({"event": "found", "part": {"modules": []}})")["part"].is_object());
  EXPECT_FALSE(parse_reply(R"({"event": "loaded", "forkable": false})")["forkable"]);
}

// A worker records every run status of outcome.h itself but timeout, the supervisor's alone (it stopped the worker).
TEST(Protocol, ADoneRecordCarriesTheRunStatusesOfTheVocabulary) {
  const auto done = [](std::string_view status) {
    return R"({"event": "done", "retiring": false, "record": {"id": "m.f", "status": ")" + std::string(status) +
           R"(", "file": "results/x", "seconds": 1}})";
  };
  for (const std::string_view status : parity::kRunStatuses) {
    if (status == "timeout")
      EXPECT_THROW(parse_reply(done(status)), ProtocolError);
    else
      EXPECT_EQ(parse_reply(done(status))["record"]["status"], status);
  }
}

TEST(Protocol, RefusesWhatAWorkerNeverSends) {
  for (const std::string line : {
           R"(not json)",
           R"([1, 2])",
           R"({"event": 5})",
           R"({"event": "launch"})",
           R"({"event": "fatal"})",
           R"({"event": "fatal", "message": "m", "no_tests": 1})",
           R"({"event": "done", "record": {"id": "m.f", "status": "ok", "file": "", "seconds": 0}})",
           R"({"event": "done", "retiring": false, "record": {"id": "m.f", "status": "pass", "file": "",
               "seconds": 0}})",
           R"({"event": "done", "retiring": false, "record": {"id": 7, "status": "ok", "file": "", "seconds": 0}})",
           R"({"event": "ready", "backend": {}, "environment": {}, "errors": [], "scenarios": [{"id": "m.f"}]})",
           R"({"event": "ready", "backend": {}, "environment": {}, "errors": [], "scenarios": [{"id": "m.f",
               "meta": {}, "file": "/s/m.py", "part": "0"}]})",
           R"({"event": "found"})",
           R"({"event": "loaded"})",
           R"({"event": "loaded", "forkable": 1})",
           R"({"event": "found", "part": []})",
           R"({"event": "done", "retiring": false, "libraries": {"pandas": 3},
               "record": {"id": "m.f", "status": "ok", "file": "", "seconds": 0}})",
       })
    EXPECT_THROW(parse_reply(line), ProtocolError) << line;
}

}  // namespace
