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
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "manifest.h"
#include "outcome.h"
#include "protocol.h"
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
// The state letter of /proc/PID/stat (R, S, T stopped, Z zombie...); 0 when there is none.
char state_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const std::size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() ? text[close + 2] : 0;
}

bool gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  return state_of(pid) == 'Z';
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
TEST(OrphanReaper, SparesWhatIgnoresSigtermInAnEndedChildsGroupUntilItsOwnEnd) {
  // A resource tracker ignores SIGTERM to outlive the processes it cleans up after (loky's, in a worker's group): a
  // child's end kills the rest of its group but not it, and the reaper's end kills it after a grace of 2 s.
  std::optional<parity::OrphanReaper> reaper(std::in_place);
  // The cleaner names itself once it ignores SIGTERM; the script ends only when told (its commands end), after both
  // are named: under load it could end, and its group be killed, before the trap.
  ChildProcess child = shell(
      "(trap '' TERM; echo cleaner $BASHPID >&200; exec sleep 60) & sleep 60 & echo plain $! >&200; "
      "read -r _ <&201; exit 4");
  std::vector<std::string> lines = replies(child, 2);
  ASSERT_EQ(lines.size(), 2u);
  std::sort(lines.begin(), lines.end());  // "cleaner PID", "plain PID"
  ASSERT_TRUE(lines[0].starts_with("cleaner ") && lines[1].starts_with("plain ")) << lines[0] << ", " << lines[1];
  const pid_t cleaner = std::stoi(lines[0].substr(8)), plain = std::stoi(lines[1].substr(6));
  child.end_commands();
  for (int i = 0; i < 500 && !child.exited(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(child.exited());
  EXPECT_TRUE(gone_within(plain, std::chrono::seconds(10))) << "the plain sleep outlived the child";
  EXPECT_FALSE(gone(cleaner)) << "the sleep ignoring SIGTERM was killed with its group";
  EXPECT_NE(state_of(cleaner), 'T') << "the group was stopped to be read and the cleaner left stopped";
  const auto before = std::chrono::steady_clock::now();
  reaper.reset();
  EXPECT_GE(std::chrono::steady_clock::now() - before, std::chrono::milliseconds(1900)) << "it had no grace";
  EXPECT_TRUE(gone(cleaner)) << "the reaper's end left it";
}

// Review finding: a process that ignores SIGTERM in a stopped worker's group (a scenario's own, not only a resource
// tracker) was spared until the run's end, a core and memory outside every limit; now until its grace is over.
TEST(OrphanReaper, KillsASparedProcessOnceItsGraceIsOver) {
  parity::OrphanReaper reaper;
  ChildProcess child = shell("(trap '' TERM; echo cleaner $BASHPID >&200; exec sleep 60) & read -r _ <&201; exit 0");
  const std::vector<std::string> lines = replies(child, 1);
  ASSERT_EQ(lines.size(), 1u);
  const pid_t cleaner = std::stoi(lines[0].substr(8));
  child.end_commands();
  for (int i = 0; i < 500 && !child.exited(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(child.exited());
  EXPECT_EQ(parity::kill_overdue_cleaners(60.0), 0u) << "killed within its grace";
  EXPECT_FALSE(gone(cleaner));
  EXPECT_EQ(parity::kill_overdue_cleaners(0.0), 1u);
  parity::reap_children({});
  EXPECT_TRUE(gone_within(cleaner, std::chrono::seconds(10))) << "still there after its grace";
  EXPECT_EQ(parity::kill_overdue_cleaners(0.0), 0u) << "killed twice";
}

// Review finding: a worker inherited parity's own blocked or ignored SIGTERM (a runner may start it so), and then
// every process it started looked like a cleaner to kill_group_but_cleaners, spared at a timeout until the run's end.
TEST(ChildProcess, StartsWithSigtermsDefaultActionWhateverItsParentHas) {
  sigset_t term, before;
  ::sigemptyset(&term);
  ::sigaddset(&term, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &term, &before);
  struct sigaction ignore {
  }, previous{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGTERM, &ignore, &previous);
  // The child reads its own status as it was started: the shell execs grep. A grep the shell forked to read the
  // shell's /proc/$$/status raced with the shell itself, which blocks SIGINT, SIGTERM and SIGCHLD for a moment around
  // each fork: under load the test read that moment (SigBlk 0x14002) and failed about one run in four.
  ChildProcess child = shell("exec grep -E '^Sig(Blk|Ign):' /proc/self/status >&200");
  ::sigaction(SIGTERM, &previous, nullptr);
  ::sigprocmask(SIG_SETMASK, &before, nullptr);
  const std::vector<std::string> lines = replies(child, 2);
  ASSERT_EQ(lines.size(), 2u);
  for (const std::string& line : lines)
    EXPECT_EQ((std::strtoull(line.c_str() + 7, nullptr, 16) >> (SIGTERM - 1)) & 1, 0u) << line;
  EXPECT_EQ(child.wait_end(10.0), "exit code 0");
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

// One-character changes of a reply (an insertion, a deletion or a replacement of JSON's own characters and a few
// others), as a scenario forging replies might write them; a fixed sequence, the same on every run.
class SmallChanges {
 public:
  explicit SmallChanges(std::uint64_t seed) : state_(seed) {}
  std::string of(std::string line) {
    static const std::string alphabet = "{}[]\",:\\-.e05abdfilnrstu \x01\xc3\xa9";
    const std::size_t at = next() % line.size();
    const char ch = alphabet[next() % alphabet.size()];
    switch (next() % 3) {
      case 0:
        line.insert(at, 1, ch);
        break;
      case 1:
        line.erase(at, 1);
        break;
      default:
        line[at] = ch;
        break;
    }
    return line;
  }
  /// Of `rounds` changes of `line`, those `reads` takes, each handed to `check`; how many it took.
  template <class Reads, class Check>
  std::size_t taken(const std::string& line, int rounds, Reads reads, Check check) {
    std::size_t count = 0;
    for (int round = 0; round < rounds; ++round) {
      const std::string changed = of(line);
      if (!reads(changed)) continue;
      ++count;
      check(changed);
    }
    return count;
  }

 private:
  std::size_t next() {
    state_ = state_ * 6364136223846793005u + 1442695040888963407u;
    return static_cast<std::size_t>(state_ >> 33);
  }
  std::uint64_t state_;
};

// A done reply as the worker writes it (worker.cc): the record's to_json without meta, the event added, compact.
std::string worker_done(const parity::ScenarioRecord& record, bool retiring) {
  nlohmann::json done = {{"record", parity::to_json(record)}, {"retiring", retiring}};
  done["record"].erase("meta");
  done["event"] = "done";
  return done.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The record read_plain_done's reply makes (runner.cc, take_plain_done) and its manifest entry, beside the record
// parse_reply's makes and its entry: what the supervisor writes either way.
void expect_read_as_parsed(const std::string& line) {
  const std::optional<parity::protocol::PlainDone> done = parity::protocol::read_plain_done(line);
  ASSERT_TRUE(done) << line;
  nlohmann::json reply = parse_reply(line);  // throws: it took what parse_reply refuses
  ASSERT_FALSE(reply.contains("libraries"));
  EXPECT_EQ(done->retiring, reply.at("retiring").get<bool>());
  parity::ScenarioRecord read;
  read.id = done->id, read.status = done->status, read.file = done->file, read.pickle_file = done->pickle_file;
  read.pickle_offset = done->pickle_offset;
  read.seconds = done->seconds;
  parity::ScenarioRecord parsed;
  try {
    parsed = parity::record_from_json(reply.at("record"));
  } catch (const std::invalid_argument&) {
    // A result file outside results/, or a pickle offset with no result file: take_plain_done's own checks refuse it.
    const auto unsafe = [](const std::string& file) { return !file.empty() && !parity::is_safe_result_path(file); };
    EXPECT_TRUE(unsafe(read.file) || unsafe(read.pickle_file) || parity::pickle_offset_misplaced(read)) << line;
    return;
  }
  if (!done->error.empty()) read.error = nlohmann::json::parse(done->error);
  EXPECT_EQ(read.id, parsed.id);
  EXPECT_EQ(read.status, parsed.status);
  EXPECT_EQ(read.file, parsed.file);
  EXPECT_EQ(read.pickle_file, parsed.pickle_file);
  EXPECT_EQ(read.pickle_offset, parsed.pickle_offset);
  EXPECT_EQ(read.seconds, parsed.seconds);
  EXPECT_EQ(read.error, parsed.error);
  for (parity::ScenarioRecord* record : {&read, &parsed}) record->meta = {{"function", "f"}, {"tags", {"t"}}};
  EXPECT_EQ(parity::manifest_entry_text(read, done->pasted), parity::manifest_entry_text(parsed)) << line;
}

parity::ScenarioRecord full_record() {
  parity::ScenarioRecord r;
  r.id = "m.f[\xc3\xa9]";
  r.status = "xfail";
  r.file = parity::result_file_for(r.id);
  r.pickle_file = parity::pickle_file_for(r.id);
  r.seconds = 0.02112445;
  r.error = {{"type", "E"}, {"message", "a \"quoted\"\nline"}, {"traceback", "T\n"}, {"reason", "r"}};
  r.fidelity = {{"outputs", "xxh3:0"}, {"outputs['\xc3\xa9']", "xxh3:1"}, {"outputs[0]", "xxh3:2"}};
  r.fidelity_values = {{"outputs", "builtins.list of 1"}};
  r.pickle_error = {{"type", "PicklingError"}, {"message", "no"}, {"path", "outputs"}};
  r.output = {{"stdout", "x\n\x01"}, {"stderr", ""}, {"truncated", true}};
  return r;
}

TEST(Protocol, ReadsTheDoneRepliesAWorkerWritesAsTheirParseGivesThem) {
  parity::ScenarioRecord ok;
  ok.id = "m0.s0";
  ok.status = "ok";
  ok.file = parity::result_file_for(ok.id);
  ok.pickle_offset = 384;  // the pickle at the end of the result file (manifest version 2)
  ok.seconds = 1e-7;
  ok.fidelity = {{"outputs", "xxh3:7dc61393146eab47"}, {"outputs['exp']", "xxh3:bf3cb269363196ed"}};
  ok.fidelity_values = {{"outputs", "builtins.dict of 1"}, {"outputs['exp']", "numpy.ndarray <f8 shape (16,)"}};
  expect_read_as_parsed(worker_done(ok, false));
  expect_read_as_parsed(worker_done(full_record(), true));
  ok.pickle_offset = 0, ok.status = "xfail";
  expect_read_as_parsed(worker_done(ok, false));
  ok.pickle_offset = std::numeric_limits<std::uint64_t>::max() / 10;  // 19 digits
  expect_read_as_parsed(worker_done(ok, false));
  parity::ScenarioRecord bare;  // an error before anything ran: no file, no digests
  bare.id = "m.g", bare.status = "error", bare.seconds = 3;
  bare.error = {{"type", "ImportError"}, {"message", "m"}};
  expect_read_as_parsed(worker_done(bare, false));
  for (const std::string_view status : parity::kRunStatuses) {
    bare.status = status;
    if (status == "timeout") continue;
    expect_read_as_parsed(worker_done(bare, false));
  }
  // Integer seconds, empty objects: values as the parse reads them.
  expect_read_as_parsed(
      R"({"event":"done","record":{"file":"","id":"a","seconds":2,"status":"skip"},"retiring":false})");
  expect_read_as_parsed(
      R"({"event":"done","record":{"fidelity":{},"file":"","id":"a","output":{},"seconds":1e-07,"status":"skip"},)"
      R"("retiring":false})");
}

// Anything else is left to parse_reply (which takes or refuses it): read_plain_done says nothing of it.
TEST(Protocol, LeavesEveryOtherDoneReplyToTheParse) {
  const std::string record = R"("file":"","id":"a","seconds":0.5,"status":"ok")";
  const auto done = [](const std::string& fields, const std::string& tail = R"(,"retiring":false})") {
    return R"({"event":"done","record":{)" + fields + "}" + tail;
  };
  EXPECT_TRUE(parity::protocol::read_plain_done(done(record)));
  for (const std::string& line : {
           R"({"event":"done","libraries":{"numpy":"2"},"record":{)" + record + R"(},"retiring":false})",
           done(R"("file":"","id":"a","meta":{},"seconds":0.5,"status":"ok")"),
           done(R"("extra":1,"file":"","id":"a","seconds":0.5,"status":"ok")"),
           done(R"("id":"a","file":"","seconds":0.5,"status":"ok")"),
           done(R"("file":"","id":"a","id":"b","seconds":0.5,"status":"ok")"),
           done(R"("file":"","id":"a","seconds":0.5)"),
           done(R"("file":"","seconds":0.5,"status":"ok")"),
           done(R"("file":"","id":"a","seconds":0.5,"status":"timeout")"),
           done(R"("file":"","id":"a","seconds":0.5,"status":"pass")"),
           done(R"("file":"","id":"a\u0041","seconds":0.5,"status":"ok")"),
           done(R"("file":"","id":"a\"","seconds":0.5,"status":"ok")"),
           done(R"("file":"","id":"a","seconds":"0.5","status":"ok")"),
           done(R"("file":"","id":"a","seconds":1e999,"status":"ok")"),
           done(R"("file":"","id":"a","seconds":0.5,"status":"ok")", R"(,"retiring":0})"),
           done(R"("file":"","id":"a","seconds":0.5,"status":"ok")", R"(,"retiring":false} )"),
           done(R"("file":"","id":"a","seconds":0.5,"status":"ok")", R"(,"retiring":false}})"),
           done(R"("fidelity":null,"file":"","id":"a","seconds":0.5,"status":"ok")"),
           done(R"("fidelity":[],"file":"","id":"a","seconds":0.5,"status":"ok")"),
           done(R"("fidelity":{"b":"1","a":"2"},"file":"","id":"a","seconds":0.5,"status":"ok")"),
           done(R"("fidelity":{"a\"b":"1"},"file":"","id":"a","seconds":0.5,"status":"ok")"),
           done(R"("error":null,"file":"","id":"a","seconds":0.5,"status":"ok")"),
           done(R"("file":"","id":"a","pickle_file":7,"seconds":0.5,"status":"ok")"),
           done(R"("file":"results/a","id":"a","pickle_offset":-1,"seconds":0.5,"status":"ok")"),
           done(R"("file":"results/a","id":"a","pickle_offset":1.5,"seconds":0.5,"status":"ok")"),
           done(R"("file":"results/a","id":"a","pickle_offset":1e3,"seconds":0.5,"status":"ok")"),
           done(R"("file":"results/a","id":"a","pickle_offset":"3","seconds":0.5,"status":"ok")"),
           done(R"("file":"results/a","id":"a","pickle_offset":03,"seconds":0.5,"status":"ok")"),
           done(R"("file":"results/a","id":"a","pickle_offset":18446744073709551616,"seconds":0.5,"status":"ok")"),
           done(R"("file":"results/a","id":"a","seconds":0.5,"pickle_offset":3,"status":"ok")"),
           std::string(R"({"event": "done","record":{)") + record + R"(},"retiring":false})",
           std::string(R"({"event":"started"})"),
       })
    EXPECT_FALSE(parity::protocol::read_plain_done(line)) << line;
}

// Among many small changes of a worker's reply (what a scenario could forge), whatever read_plain_done takes, the parse
// takes too, with the same values and the same manifest entry.
TEST(Protocol, WhatReadPlainDoneTakesTheParseGivesTheSame) {
  SmallChanges changes(99);
  std::size_t taken = 0;
  for (const std::string& line :
       {worker_done(full_record(), false),
        std::string(R"({"event":"done","record":{"file":"","id":"a","seconds":0.5,)"
                    R"("status":"ok"},"retiring":false})"),
        std::string(R"({"event":"done","record":{"file":"results/a.parity","id":"a","pickle_offset":928,)"
                    R"("seconds":0.5,"status":"ok"},"retiring":false})")})
    taken += changes.taken(line, 5000, parity::protocol::read_plain_done, expect_read_as_parsed);
  EXPECT_GT(taken, 100u);
}

// A ready reply as the worker writes it (worker.cc, discovery.plan_text): the head compact, the plan spliced in.
const std::string kReady =
    R"({"backend":{"name":"gold","spec":"gold"},"environment":{"python":"3.11"},"errors":[],"event":"ready",)"
    R"("scenarios":[{"file":"/s/m.py","id":"m.f","meta":{"function":"f","params":{"n":1.5},"tags":["a"],)"
    R"("timeout":2.5},"part":0},{"file":"","id":"t.py::g","meta":{},"part":-1}]})";

// What read_plain_ready reads of `line` is what parse_reply gives.
void expect_ready_as_parsed(const std::string& line) {
  const std::optional<parity::protocol::PlainReady> ready = parity::protocol::read_plain_ready(line);
  ASSERT_TRUE(ready) << line;
  {
    const nlohmann::json parsed = parse_reply(line);
    EXPECT_EQ(ready->backend, parsed.at("backend"));
    EXPECT_EQ(ready->environment, parsed.at("environment"));
    EXPECT_EQ(ready->errors, parsed.at("errors"));
    ASSERT_EQ(ready->scenarios.size(), parsed.at("scenarios").size());
    for (std::size_t i = 0; i < ready->scenarios.size(); ++i) {
      const auto& s = ready->scenarios[i];
      const nlohmann::json& p = parsed.at("scenarios").at(i);
      EXPECT_EQ(s.id, p.at("id").get<std::string>());
      EXPECT_EQ(s.file, p.at("file").get<std::string>());
      EXPECT_EQ(s.part, p.at("part").get<int>());
      EXPECT_EQ(nlohmann::json::parse(s.meta), p.at("meta"));
      EXPECT_EQ(s.timeout.empty() ? nlohmann::json() : nlohmann::json::parse(s.timeout),
                p.at("meta").value("timeout", nlohmann::json()));
    }
  }
}

TEST(Protocol, ReadsTheReadyReplyAWorkerWritesAsItsParseGivesIt) {
  expect_ready_as_parsed(kReady);
  expect_ready_as_parsed(R"({"backend":{},"environment":{},"errors":[{"id":"m"}],"event":"ready","scenarios":[]})");
}

// Among many small changes of a worker's ready reply, whatever read_plain_ready takes, the parse takes the same.
TEST(Protocol, WhatReadPlainReadyTakesTheParseGivesTheSame) {
  SmallChanges changes(7);
  EXPECT_GT(changes.taken(kReady, 10000, parity::protocol::read_plain_ready, expect_ready_as_parsed), 100u);
}

TEST(Protocol, LeavesEveryOtherReadyReplyToTheParse) {
  const auto changed = [](std::string_view from, std::string_view to) {
    std::string line = kReady;
    const std::size_t at = line.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return line.replace(at, from.size(), to);
  };
  for (const std::string& line : {
           changed(R"("part":0)", R"("part":"0")"),
           changed(R"("part":0)", R"("part":0.0)"),
           changed(R"("part":0)", R"("part":0,"x":1)"),
           changed(R"({"file":"/s/m.py","id":"m.f",)", R"({"id":"m.f",)"),
           changed(R"("id":"m.f")", R"("id":"m\"f")"),
           changed(R"("meta":{})", R"("meta":[])"),
           changed(R"("tags":["a"],"timeout")", R"("timeout":1,"tags":["a"],"timeout")"),
           changed(R"("params":{"n":1.5})", R"("params":{"n":1.50})"),
           changed(R"("errors":[])", R"("errors":{})"),
           changed(R"("event":"ready")", R"("event":"fatal")"),
           changed("]}", "]} "),
           changed("]}", "],\"x\":1}"),
           changed(R"({"backend":{"name")", R"({"backend": {"name")"),
           changed(R"(,"part":-1})", "}"),
           // What a parse of the part alone would have taken: a NUL ending it early, a byte-order mark before it,
           // nesting (built to its depth before it failed), spaces.
           changed(R"("part":0)", std::string(R"("part":0)") + '\0' + "junk"),
           changed(R"("part":0)",
                   "\"part\":\xEF\xBB\xBF"
                   "0"),
           changed(R"("part":0)", R"("part":[[[0]]])"),
           changed(R"("part":0)", R"("part": 0 )"),
       })
    EXPECT_FALSE(parity::protocol::read_plain_ready(line)) << line;
}

}  // namespace
