// Unit tests of the terminal view (progress.h): lines and live displays, verbosity, the summary, with a fake clock.
#include "progress.h"

#include <gtest/gtest.h>
#include <pty.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "test_support.h"

using namespace parity;
using parity::testing::contains;

namespace {

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end = text.find('\n'); end != std::string::npos; end = text.find('\n', start)) {
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

ShownScenario shown(const std::string& id, const std::string& status, std::vector<std::string> failed_checks = {},
                    std::vector<std::string> details = {}, std::vector<std::string> verbose_details = {}) {
  return {id, status, 0.25, std::move(failed_checks), "", std::move(details), std::move(verbose_details)};
}

// A Progress writing to memory, on a clock the test moves by hand.
class ProgressTest : public ::testing::Test {
 protected:
  ProgressTest() : out_(open_memstream(&buffer_, &size_)) {}
  ~ProgressTest() override {
    std::fclose(out_);
    std::free(buffer_);
  }

  ProgressOptions options(Display display, Verbosity verbosity, std::size_t total, std::string verb = "compare",
                          int columns = 0) {
    return {std::move(verb), total, display, verbosity, columns, [this] { return now_; }};
  }

  // Everything written so far.
  std::string text() {
    std::fflush(out_);
    return std::string(buffer_, size_);
  }

  // What was written since the last call.
  std::string fresh() {
    const std::string all = text();
    const std::string part = all.substr(seen_);
    seen_ = all.size();
    return part;
  }

  char* buffer_ = nullptr;
  std::size_t size_ = 0;
  std::FILE* out_;
  std::size_t seen_ = 0;
  double now_ = 1000;
};

TEST_F(ProgressTest, LinesDisplayPrintsOneLinePerScenarioWithoutEscapeCodes) {
  Progress progress(out_, options(Display::kLines, Verbosity::kNormal, 3));
  ShownScenario skipped = shown("m.c", "skip");
  skipped.note = "gold: no GPU here";
  for (const ShownScenario& s : {shown("m.a", "pass"), shown("m.b", "fail", {"values", "dtype"}), skipped}) {
    progress.begin(s.id);
    progress.end(s);
  }
  EXPECT_EQ(lines_of(text()),
            (std::vector<std::string>{"[1/3] pass   m.a (250 ms)", "[2/3] fail   m.b (250 ms) values, dtype",
                                      "[3/3] skip   m.c (250 ms) gold: no GPU here"}));
  EXPECT_FALSE(contains(text(), "\x1b")) << text();
  EXPECT_FALSE(contains(text(), "\r")) << text();
}

TEST_F(ProgressTest, CounterIsPaddedToTheWidthOfTheTotal) {
  Progress progress(out_, options(Display::kLines, Verbosity::kNormal, 104));
  progress.end(shown("m.a", "pass"));
  EXPECT_EQ(text(), "[  1/104] pass   m.a (250 ms)\n");
}

TEST_F(ProgressTest, FailuresShowTheirCheckMessagesIndentedUnderTheirLine) {
  Progress progress(out_, options(Display::kLines, Verbosity::kNormal, 2));
  progress.end(shown("m.a", "fail", {"values"}, {"[values] outputs['a']: differs\nat [0]\n", "Repro: x"}));
  progress.end(shown("m.b", "xfail", {"values"}, {"[values] outputs['b']: expected"}));
  EXPECT_EQ(text(),
            "[1/2] fail   m.a (250 ms) values\n"
            "  [values] outputs['a']: differs\n"
            "        at [0]\n"
            "  Repro: x\n"
            "[2/2] xfail  m.b (250 ms) values\n");
}

TEST_F(ProgressTest, LiveDisplayRedrawsOneLineInPlaceWithCountsCurrentIdAndEta) {
  Progress progress(out_, options(Display::kLive, Verbosity::kNormal, 4, "run"));
  progress.begin("m.a");
  EXPECT_EQ(fresh(), "\r\x1b[K[0/4] 0 failed, 0 error | m.a | 0:00 elapsed, ETA -:--");
  now_ += 2;
  progress.end(shown("m.a", "ok"));
  EXPECT_EQ(fresh(), "") << "the line would name a scenario that has finished";
  now_ += 1;
  progress.begin("m.b");
  EXPECT_EQ(fresh(), "\r\x1b[K[1/4] 0 failed, 0 error | m.b | 0:03 elapsed, ETA 0:09");
  EXPECT_FALSE(contains(text(), "\n")) << "a passing scenario prints no line of its own on a live display";
}

TEST_F(ProgressTest, EtaIsTheMeanTimePerFinishedScenarioTimesTheRemaining) {
  Progress progress(out_, options(Display::kLive, Verbosity::kNormal, 10));
  for (int i = 0; i < 4; ++i) {
    progress.begin("m." + std::to_string(i));
    now_ += 5;
    progress.end(shown("m." + std::to_string(i), "pass"));
  }
  fresh();
  progress.begin("m.4");
  EXPECT_EQ(fresh(), "\r\x1b[K[ 4/10] 0 failed, 0 error | m.4 | 0:20 elapsed, ETA 0:30");
  now_ += 3600;
  progress.begin("m.slow");
  EXPECT_TRUE(contains(fresh(), "1:00:20 elapsed, ETA 1:30:30")) << text();
}

TEST_F(ProgressTest, LiveDisplayRedrawsAtMostTenTimesASecond) {
  Progress progress(out_, options(Display::kLive, Verbosity::kNormal, 5));
  progress.begin("m.a");
  now_ += 0.03;
  progress.end(shown("m.a", "pass"));
  now_ += 0.03;
  progress.begin("m.b");
  EXPECT_EQ(occurrences(text(), "\r\x1b[K"), 1u) << text();
  now_ += 0.05;
  progress.begin("m.c");
  EXPECT_EQ(occurrences(text(), "\r\x1b[K"), 2u) << text();
  EXPECT_FALSE(contains(text(), "| m.b |")) << text();
  EXPECT_TRUE(contains(text(), "[1/5] 0 failed, 0 error | m.c |")) << text();
}

TEST_F(ProgressTest, LiveDisplayPrintsFailuresAboveTheLineAndRedrawsItAtOnce) {
  Progress progress(out_, options(Display::kLive, Verbosity::kNormal, 3));
  progress.begin("m.a");
  fresh();
  progress.end(shown("m.a", "fail", {"values"}, {"[values] outputs['a']: differs"}));
  EXPECT_EQ(fresh(),
            "\r\x1b[K[1/3] fail   m.a (250 ms) values\n  [values] outputs['a']: differs\n"
            "\r\x1b[K[1/3] 1 failed, 0 error | m.a | 0:00 elapsed, ETA 0:00");
  progress.begin("m.b");
  progress.end(shown("m.b", "error", {"error"}));
  EXPECT_TRUE(contains(fresh(), "\r\x1b[K[2/3] 1 failed, 1 error | m.b |")) << text();
}

TEST_F(ProgressTest, LiveLineIsDrawnForTheLastScenarioAndErasedBeforeTheSummary) {
  Progress progress(out_, options(Display::kLive, Verbosity::kNormal, 2, "run"));
  progress.begin("m.a");
  progress.end(shown("m.a", "ok"));
  progress.begin("m.b");
  progress.end(shown("m.b", "ok"));
  EXPECT_TRUE(contains(text(), "\r\x1b[K[2/2] 0 failed, 0 error | m.b |")) << text();
  progress.summary({{"results", "/tmp/out"}});
  const std::string after_last_erase = text().substr(text().rfind("\x1b[K") + 3);
  EXPECT_EQ(after_last_erase.rfind("parity run: 2 scenarios in 0.00 s\n", 0), 0u) << text();
}

TEST_F(ProgressTest, LiveLineIsCutToTheTerminalWidthKeepingTheEndOfTheId) {
  Progress progress(out_, options(Display::kLive, Verbosity::kNormal, 2, "run", 80));
  progress.begin("module.a_very_long_scenario_name[dtype=float64, order=F, shape=(3, 4, 5)]");
  const std::string line = fresh().substr(4);  // after "\r\x1b[K"
  EXPECT_EQ(line, "[0/2] 0 failed, 0 error | ...order=F, shape=(3, 4, 5)] | 0:00 elapsed, ETA -:--");
  EXPECT_EQ(line.size(), 79u) << "the last column is left free: writing there wraps the line";
}

TEST_F(ProgressTest, QuietShowsOnlyFailuresOneLineEachAndAOneLineSummary) {
  Progress progress(out_, options(Display::kLines, Verbosity::kQuiet, 5, "run"));
  for (const char* status : {"ok", "skip", "xfail", "error", "xpass"})
    progress.end(shown(std::string("m.") + status, status, {}, {"the details"}, {"Traceback"}));
  progress.summary({{"results", "/tmp/out"}});
  EXPECT_EQ(text(),
            "[4/5] error  m.error (250 ms)\n"
            "[5/5] xpass  m.xpass (250 ms)\n"
            "parity run: 5 scenarios in 0.00 s: 1 ok, 1 error, 1 xfail, 1 xpass, 1 skip\n"
            "  results  /tmp/out\n");
}

TEST_F(ProgressTest, QuietOnATerminalDrawsNoLiveLine) {
  Progress progress(out_, options(Display::kLive, Verbosity::kQuiet, 2));
  progress.begin("m.a");
  progress.end(shown("m.a", "pass"));
  progress.begin("m.b");
  progress.end(shown("m.b", "fail", {"values"}));
  progress.summary({});
  EXPECT_FALSE(contains(text(), "\x1b")) << text();
  EXPECT_EQ(lines_of(text()).front(), "[2/2] fail   m.b (250 ms) values");
}

TEST_F(ProgressTest, VerboseShowsEveryScenarioAndAllItsDetails) {
  Progress progress(out_, options(Display::kLive, Verbosity::kVerbose, 3));
  progress.end(shown("m.a", "pass", {}, {}, {"passed: shape (2 leaves)"}));
  progress.end(shown("m.b", "xfail", {"values"}, {"[values] outputs['b']: expected"}));
  progress.end(shown("m.c", "error", {"error"}, {"[error] gold: raised"}, {"Traceback (most recent call last):\n  x"}));
  const std::string out = text();
  for (const char* part : {"[1/3] pass   m.a (250 ms)\n  passed: shape (2 leaves)\n",
                           "[2/3] xfail  m.b (250 ms) values\n  [values] outputs['b']: expected\n",
                           "[3/3] error  m.c (250 ms) error\n  [error] gold: raised\n"
                           "  Traceback (most recent call last):\n          x\n"})
    EXPECT_TRUE(contains(out, part)) << part << "\nnot in\n" << out;
}

TEST_F(ProgressTest, NormalVerbosityKeepsVerboseDetailsBack) {
  Progress progress(out_, options(Display::kLines, Verbosity::kNormal, 1));
  progress.end(shown("m.a", "error", {"error"}, {"[error] gold: raised"}, {"Traceback (most recent call last):"}));
  EXPECT_TRUE(contains(text(), "[error] gold: raised")) << text();
  EXPECT_FALSE(contains(text(), "Traceback")) << text();
}

TEST_F(ProgressTest, SummaryTablesCountStatusesInFixedOrderAndFailedScenariosByCheck) {
  Progress progress(out_, options(Display::kLines, Verbosity::kNormal, 6));
  for (const ShownScenario& s :
       {shown("m.x", "xfail", {"values"}), shown("m.e", "error", {"error"}), shown("m.f1", "fail", {"values", "dtype"}),
        shown("m.p1", "pass"), shown("m.f2", "fail", {"values"}), shown("m.p2", "pass")})
    progress.end(s);
  now_ += 65;
  fresh();
  progress.summary({{"JSON report", "/tmp/r.json"}, {"JUnit report", "/tmp/r.xml"}});
  EXPECT_EQ(fresh(),
            "parity compare: 6 scenarios in 1:05\n"
            "  status  scenarios\n"
            "  pass            2\n"
            "  fail            2\n"
            "  error           1\n"
            "  xfail           1\n"
            "  failed check  scenarios\n"
            "  values                2\n"
            "  dtype                 1\n"
            "  error                 1\n"
            "  JSON report   /tmp/r.json\n"
            "  JUnit report  /tmp/r.xml\n");
}

TEST_F(ProgressTest, SummaryOfARunHasNoCheckTable) {
  Progress progress(out_, options(Display::kLines, Verbosity::kNormal, 2, "run"));
  progress.end(shown("m.a", "ok"));
  progress.end(shown("m.b", "skip"));
  now_ += 1.25;
  fresh();
  progress.summary({{"results", "/tmp/out"}});
  EXPECT_EQ(fresh(),
            "parity run: 2 scenarios in 1.25 s\n"
            "  status  scenarios\n"
            "  ok              1\n"
            "  skip            1\n"
            "  results  /tmp/out\n");
}

TEST(ClockText, MinutesAndSecondsThenHours) {
  EXPECT_EQ(clock_text(0), "0:00");
  EXPECT_EQ(clock_text(59.9), "0:59");
  EXPECT_EQ(clock_text(75), "1:15");
  EXPECT_EQ(clock_text(3725), "1:02:05");
  EXPECT_EQ(clock_text(-1), "0:00");
}

TEST(ToShown, CompareOutcomeNamesEachFailedCheckOnceAndKeepsTheirMessagesThenTheRepro) {
  ScenarioOutcome outcome;
  outcome.id = "m.f";
  outcome.status = "fail";
  outcome.message = "failed checks: dtype, values";
  outcome.compare_seconds = 0.5;
  outcome.repro = "r";
  outcome.checks = {{"values", false, "outputs['a']", "a differs", {}},
                    {"dtype", false, "outputs['b']", "b differs", {}},
                    {"values", false, "outputs['c']", "c differs", {}},
                    {"shape", true, "outputs", "", {{"leaves", 3}}},
                    {"dtype", true, "outputs", "", {{"leaves", 1}}}};
  const ShownScenario s = to_shown(outcome);
  EXPECT_EQ(s.failed_checks, (std::vector<std::string>{"values", "dtype"}));
  EXPECT_EQ(s.details, (std::vector<std::string>{"[values] outputs['a']: a differs", "[dtype] outputs['b']: b differs",
                                                 "[values] outputs['c']: c differs", "Repro: r"}))
      << "the repro, a field of the outcome, once under the failures";
  EXPECT_EQ(s.note, "") << "a fail's line names its checks";
  EXPECT_EQ(s.verbose_details, (std::vector<std::string>{"passed: shape (3 leaves), dtype (1 leaf)"}));
  EXPECT_DOUBLE_EQ(s.seconds, 0.5);
  const ShownScenario plain = to_shown(outcome, false);
  EXPECT_TRUE(plain.verbose_details.empty()) << "the checks that passed are named only for --verbose";
  EXPECT_EQ(plain.details, s.details);
  EXPECT_EQ(plain.failed_checks, s.failed_checks);

  outcome.status = "error";
  outcome.message = "the gold run raised E: m\nTraceback";
  EXPECT_EQ(to_shown(outcome).note, "the gold run raised E: m");
}

TEST(ToShown, RunRecordGivesTheErrorOnItsLineAndTheTracebackWhenVerbose) {
  ScenarioRecord record;
  record.id = "m.f";
  record.status = "error";
  record.seconds = 0.125;
  record.error = {{"type", "RuntimeError"}, {"message", "boom"}, {"traceback", "Traceback ...\n"}};
  ShownScenario s = to_shown(record);
  EXPECT_EQ(s.note, "RuntimeError: boom");
  EXPECT_TRUE(s.details.empty()) << "the line already says it all";
  EXPECT_EQ(s.verbose_details, (std::vector<std::string>{"Traceback ...\n"}));

  record.error["message"] = "boom\nsecond line";
  s = to_shown(record);
  EXPECT_EQ(s.note, "RuntimeError: boom");
  EXPECT_EQ(s.details, (std::vector<std::string>{"RuntimeError: boom\nsecond line"}));

  record.status = "xfail";
  record.error["reason"] = "known bug";
  EXPECT_EQ(to_shown(record).note, "expected failure: known bug");

  record.status = "skip";
  record.error = {{"type", "SkipScenario"}, {"message", "needs a GPU"}, {"traceback", ""}};
  s = to_shown(record);
  EXPECT_EQ(s.note, "needs a GPU");
  EXPECT_TRUE(s.verbose_details.empty());

  record.status = "ok";
  record.error = nullptr;
  EXPECT_EQ(to_shown(record).note, "");
}

// TERM is restored, as later tests in this process may read it.
class DisplayFor : public ::testing::Test {
 protected:
  DisplayFor() {
    if (const char* term = std::getenv("TERM")) saved_ = term;
  }
  ~DisplayFor() override { saved_.empty() ? ::unsetenv("TERM") : ::setenv("TERM", saved_.c_str(), 1); }
  std::string saved_;
};

TEST_F(DisplayFor, ATerminalIsLiveUnlessTermIsDumbOrUnset) {
  int controller = -1, terminal = -1;
  winsize size{};
  size.ws_col = 77;
  size.ws_row = 24;
  ASSERT_EQ(::openpty(&controller, &terminal, nullptr, nullptr, &size), 0);
  std::FILE* tty = ::fdopen(terminal, "w");
  ASSERT_NE(tty, nullptr);
  ::setenv("TERM", "xterm", 1);
  EXPECT_EQ(display_for(tty), Display::kLive);
  EXPECT_EQ(terminal_columns(tty), 77);
  EXPECT_EQ(progress_options(tty, "run", 3, Verbosity::kNormal).columns, 77);
  ::setenv("TERM", "dumb", 1);
  EXPECT_EQ(display_for(tty), Display::kLines);
  ::unsetenv("TERM");
  EXPECT_EQ(display_for(tty), Display::kLines);
  std::fclose(tty);
  ::close(controller);
}

TEST_F(DisplayFor, AFileIsLinesWhateverTheTerm) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  ::setenv("TERM", "xterm", 1);
  EXPECT_EQ(display_for(file), Display::kLines);
  EXPECT_EQ(terminal_columns(file), 0);
  EXPECT_EQ(progress_options(file, "run", 3, Verbosity::kNormal).columns, 0);
  std::fclose(file);
}

// Ids, statuses, notes and details come from results directories and scenarios: a terminal gets them escaped, and
// the live display's own erase code is the only control sequence written.
TEST_F(ProgressTest, WhatFilesAndScenariosSayCannotDriveTheTerminal) {
  const std::string attack = "\x1b[2J\r\x1b[1A[1/1] pass   forged\x1b]0;owned\x07\xe2\x80\xae\xff";
  for (const Display display : {Display::kLines, Display::kLive}) {
    SCOPED_TRACE(display == Display::kLive ? "live" : "lines");
    const std::size_t start = text().size();
    {
      Progress progress(out_, options(display, Verbosity::kVerbose, 2));
      ShownScenario s =
          shown("m.a" + attack, "error" + attack, {"values" + attack}, {"detail\n" + attack}, {"traceback" + attack});
      s.note = "note" + attack;
      progress.begin(s.id);
      progress.end(s);
      progress.begin("m.b" + attack);
      progress.summary({{"results", "/tmp/out" + attack}});
    }
    std::string written = text().substr(start);
    for (std::size_t at; (at = written.find("\r\x1b[K")) != std::string::npos;) written.erase(at, 4);
    for (const char* raw : {"\x1b", "\r", "\x07", "\xe2\x80\xae", "\xff"})
      EXPECT_FALSE(contains(written, raw)) << written;
    EXPECT_TRUE(contains(written, "m.a\\x1b[2J\\r\\x1b[1A[1/1] pass   forged\\x1b]0;owned\\x07\\u202e\\xff"))
        << written;
    EXPECT_TRUE(contains(written, "  detail\n")) << "a detail keeps its lines: " << written;
  }
}

}  // namespace
