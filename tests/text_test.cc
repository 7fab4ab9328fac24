// Unit tests of text.h (terminal escaping, shell quoting), of the commands parity prints with it (run_command), and
// of exit_keep.h.
#include "text.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "compare.h"
#include "exit_keep.h"

using json = nlohmann::json;
using parity::Newlines;
using parity::printable;

namespace {

// What a POSIX shell makes of `line` as the arguments of one printf: the words it parsed, one each. Anything the
// line ran besides (an injected command) shows as more output.
std::vector<std::string> shell_words(const std::string& line) {
  std::FILE* sh = ::popen(("printf '%s\\0' " + line).c_str(), "r");
  if (!sh) return {"<popen failed>"};
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, sh)) > 0;) out.append(buf, n);
  ::pclose(sh);
  std::vector<std::string> words;
  for (std::size_t start = 0, end; (end = out.find('\0', start)) != std::string::npos; start = end + 1)
    words.push_back(out.substr(start, end - start));
  if (out.empty() || out.back() != '\0') words.push_back("<trailing output: " + out + ">");
  return words;
}

// Whether `text` could still act on a terminal: a C0 or C1 control, DEL, an invisible formatting character, or
// malformed UTF-8 (which a terminal may decode into any of those).
bool acts_on_terminal(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t len = parity::decode_utf8(text, i, cp);
    if (len == 0 || parity::is_unprintable(cp)) return true;
    i += len;
  }
  return false;
}

TEST(Printable, KeepsOrdinaryText) {
  for (const std::string text : {"basic.matrix[n=3,dtype=float32]", "héllo wörld ✓ 😀", "a\\b", ""})
    EXPECT_EQ(printable(text), text);
}

TEST(Printable, EscapesWhatDrivesATerminalVisibly) {
  EXPECT_EQ(printable("\x1b[2J"), "\\x1b[2J");                             // erase the screen
  EXPECT_EQ(printable("x\r\x1b[1A[1/1] pass"), "x\\r\\x1b[1A[1/1] pass");  // a forged line above
  EXPECT_EQ(printable("\x1b]0;owned\x07"), "\\x1b]0;owned\\x07");          // the window title
  EXPECT_EQ(printable("a\x7f"
                      "b"),
            "a\\x7fb");
  EXPECT_EQ(printable("\xc2\x9b"
                      "2J"),
            "\\u009b2J");  // C1 CSI, as UTF-8
  EXPECT_EQ(printable("pass\xe2\x80\xae"
                      "liaf"),
            "pass\\u202eliaf");  // right-to-left override
  EXPECT_EQ(printable("a\xe2\x80\x8b"
                      "b\xef\xbb\xbf"),
            "a\\u200bb\\ufeff");                            // zero width space, BOM
  EXPECT_EQ(printable("\xf3\xa0\x80\x81"), "\\U000e0001");  // a tag character
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\ud800");          // a surrogate, no character
}

TEST(Printable, EscapesMalformedUtf8ByteByByte) {
  EXPECT_EQ(printable("a\xff"
                      "b"),
            "a\\xffb");
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");  // overlong '/'
  EXPECT_EQ(printable("\xe2\x80"), "\\xe2\\x80");  // cut short
}

TEST(Printable, NewlinesAreEscapedInANameAndKeptInAMessage) {
  EXPECT_EQ(printable("a\nb\tc"), "a\\nb\\tc");
  EXPECT_EQ(printable("a\nb\tc\x1b", Newlines::kKeep), "a\nb\tc\\x1b");
}

TEST(Printable, NothingItReturnsActsOnATerminal) {
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte += static_cast<char>(b);
  const std::string hostile = every_byte + "\xc2\x85\xe2\x80\xa8\xe2\x81\xa6\xf4\x8f\xbf\xbf\xf4\x90\x80\x80";
  EXPECT_FALSE(acts_on_terminal(printable(hostile)));
  const std::string kept = printable(hostile, Newlines::kKeep);
  for (char ch : kept) EXPECT_TRUE(static_cast<unsigned char>(ch) >= 0x20 || ch == '\n' || ch == '\t');
}

TEST(ShellQuote, EveryStringIsOneWordToTheShell) {
  const std::vector<std::string> hostile = {"candidate; echo INJECTED #",
                                            "$(echo INJECTED)",
                                            "`echo INJECTED`",
                                            "it's",
                                            "''",
                                            "",
                                            " ",
                                            "a\nb",
                                            "*",
                                            "~",
                                            "-n",
                                            "\\",
                                            "\x1b[2J",
                                            "é"};
  for (const std::string& s : hostile) {
    SCOPED_TRACE(s);
    EXPECT_EQ(shell_words(parity::shell_quote(s)), std::vector<std::string>{s});
  }
  EXPECT_EQ(shell_words(parity::shell_join(hostile)), hostile);
}

TEST(ShellQuote, PlainWordsStayUnquoted) {
  EXPECT_EQ(parity::shell_quote("/tmp/parity-repro/gold"), "/tmp/parity-repro/gold");
  EXPECT_EQ(parity::shell_quote("--role"), "--role");
  EXPECT_EQ(parity::shell_quote("m.f[n=1]"), "'m.f[n=1]'");
}

TEST(RunCommand, QuotesTheRoleAndEverythingElse) {
  const json backend = {{"name", "fsproxy"}, {"spec", "fix tures/b.py"}, {"role", "gold; echo INJECTED #"}};
  const std::string command = parity::run_command("/opt/my parity", backend);
  EXPECT_EQ(shell_words(command), (std::vector<std::string>{"/opt/my parity", "run", "--backend", "fix tures/b.py",
                                                            "--role", "gold; echo INJECTED #"}));
}

TEST(RunCommand, NamesTheRoleOnlyWhenItIsNotTheDefault) {
  EXPECT_EQ(parity::run_command("parity", {{"name", "gold"}, {"spec", "gold"}, {"role", "gold"}}),
            "parity run --backend gold");
  EXPECT_EQ(parity::run_command("parity", {{"name", "fsproxy"}, {"spec", "fsproxy"}, {"role", "gold"}}),
            "parity run --backend fsproxy --role gold");
}

// What keep_until_exit takes stays alive to the process's end, reachable (the sanitize preset's LeakSanitizer reports
// no leak for it), and the caller's moved-from value is left empty.
TEST(KeepUntilExit, KeepsTheValueAliveAndReachable) {
  auto value = std::make_shared<std::vector<int>>(1000, 7);
  const std::weak_ptr<std::vector<int>> seen = value;
  parity::keep_until_exit(std::move(value));
  EXPECT_FALSE(seen.expired());
  std::vector<std::string> big(100, std::string(1000, 'x'));
  parity::keep_until_exit(std::move(big));
  EXPECT_TRUE(big.empty());
}

}  // namespace
