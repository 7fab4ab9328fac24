// Terminal-safe and shell-safe text (see text.h): one escaping and one quoting for every print and command.
#include "text.h"

#include <cstdio>

namespace parity {
namespace {

// Ranges of invisible formatting characters a terminal would act on or hide: a right-to-left override reorders
// what follows it (a "fail" shown as "liaf"), zero-width ones hide text, the separators break lines.
constexpr char32_t kInvisible[][2] = {
    {0x00ad, 0x00ad}, {0x061c, 0x061c}, {0x180e, 0x180e}, {0x200b, 0x200f}, {0x2028, 0x202e},
    {0x2060, 0x2064}, {0x2066, 0x206f}, {0xfeff, 0xfeff}, {0xfff9, 0xfffb}, {0xe0000, 0xe007f},
};

std::string hex_escape(char32_t value, const char* format) {
  char buf[16];
  std::snprintf(buf, sizeof buf, format, static_cast<unsigned>(value));
  return buf;
}

std::string escaped(char32_t cp) {
  switch (cp) {
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    default:
      return cp < 0x80      ? hex_escape(cp, "\\x%02x")
             : cp <= 0xffff ? hex_escape(cp, "\\u%04x")
                            : hex_escape(cp, "\\U%08x");
  }
}

bool safe_in_shell(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         std::string_view("_-./=:,").find(ch) != std::string_view::npos;
}

}  // namespace

std::size_t decode_utf8(std::string_view text, std::size_t at, char32_t& cp) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[at + k]); };
  const unsigned char lead = byte(0);
  const std::size_t len = lead < 0x80           ? 1
                          : (lead >> 5) == 0x6  ? 2
                          : (lead >> 4) == 0xe  ? 3
                          : (lead >> 3) == 0x1e ? 4
                                                : 0;
  if (len == 0 || at + len > text.size()) return 0;
  cp = len == 1 ? lead : lead & (0x7f >> len);
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(k) >> 6) != 0x2) return 0;
    cp = (cp << 6) | (byte(k) & 0x3f);
  }
  static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  return cp < kMin[len] || cp > 0x10ffff ? 0 : len;
}

bool is_unprintable(char32_t cp) {
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0xd800 && cp <= 0xdfff)) return true;
  for (const auto& range : kInvisible)
    if (cp >= range[0] && cp <= range[1]) return true;
  return false;
}

std::string printable(std::string_view text, Newlines newlines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t len = decode_utf8(text, i, cp);
    if (len == 0) {
      out += hex_escape(static_cast<unsigned char>(text[i]), "\\x%02x");
      ++i;
      continue;
    }
    const bool kept = newlines == Newlines::kKeep && (cp == '\n' || cp == '\t');
    if (is_unprintable(cp) && !kept)
      out += escaped(cp);
    else
      out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

void print_line(const char* command, std::string_view message) { print_line(stderr, command, message); }

void print_line(std::FILE* out, const char* command, std::string_view message) {
  std::fprintf(out, "parity %s: %s\n", command, printable(message, Newlines::kKeep).c_str());
}

std::string shell_quote(std::string_view s) {
  bool plain = !s.empty();
  for (char ch : s) plain = plain && safe_in_shell(ch);
  if (plain) return std::string(s);
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string line;
  // Appended in two steps: GCC 12's -O3 flagged `" " + shell_quote(word)` with a bogus -Wstringop-overflow once this
  // file was batched with others (the unity build of pyproject.toml).
  for (const std::string& word : words) {
    if (!line.empty()) line += ' ';
    line += shell_quote(word);
  }
  return line;
}

bool looks_like_path(std::string_view spec) {
  return spec.find('/') != std::string_view::npos || spec.ends_with(".py");
}

}  // namespace parity
