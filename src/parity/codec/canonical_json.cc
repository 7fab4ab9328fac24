// Canonical JSON text (see canonical_json.h): a reader that only accepts, never repairs, and the pretty form.
#include "canonical_json.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>

namespace parity::canonical {
namespace {

using Byte = unsigned char;

// The length of the UTF-8 sequence at `text[at]` when nlohmann's lexer takes it (no overlong form, no surrogate,
// nothing past U+10FFFF: its own table); 0 when it refuses it. Its serializer then copies those bytes unchanged.
std::size_t utf8_length(std::string_view text, std::size_t at) {
  const auto in = [&](std::size_t i, Byte lo, Byte hi) {
    return at + i < text.size() && static_cast<Byte>(text[at + i]) >= lo && static_cast<Byte>(text[at + i]) <= hi;
  };
  const auto tail = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i)
      if (!in(i, 0x80, 0xBF)) return false;
    return true;
  };
  const Byte c = static_cast<Byte>(text[at]);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return tail(1, 2) ? 2 : 0;
  if (c == 0xE0) return in(1, 0xA0, 0xBF) && tail(2, 3) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return tail(1, 3) ? 3 : 0;
  if (c == 0xED) return in(1, 0x80, 0x9F) && tail(2, 3) ? 3 : 0;
  if (c == 0xF0) return in(1, 0x90, 0xBF) && tail(2, 4) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return tail(1, 4) ? 4 : 0;
  if (c == 0xF4) return in(1, 0x80, 0x8F) && tail(2, 4) ? 4 : 0;
  return 0;
}

bool is_lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// The escape at `text[at]` (its backslash) when nlohmann's serializer writes it: \" \\ \b \f \n \r \t, and \u00xx
// (lower-case digits) for the other control characters only. Its length, or 0.
std::size_t escape_length(std::string_view text, std::size_t at) {
  if (at + 1 >= text.size()) return 0;
  switch (text[at + 1]) {
    case '"':
    case '\\':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
      return 2;
    case 'u':
      break;
    default:
      return 0;  // \/ and the rest: the lexer reads them, the serializer never writes them
  }
  if (at + 6 > text.size() || text.compare(at + 2, 2, "00") != 0) return 0;
  const char high = text[at + 4], low = text[at + 5];
  if ((high != '0' && high != '1') || !is_lower_hex(low)) return 0;
  const int code = (high - '0') * 16 + (low <= '9' ? low - '0' : low - 'a' + 10);
  // Those five have their short escapes.
  return code == 0x08 || code == 0x09 || code == 0x0A || code == 0x0C || code == 0x0D ? 0 : 6;
}

constexpr std::uint64_t kOnes = 0x0101010101010101, kHigh = 0x8080808080808080;

// The classic bit trick for "some byte of `v` is less than n" (n <= 128), as a mask of their high bits: exact for the
// lowest such byte (what is above it may be marked by its borrow), so that on a little-endian machine the mask's lowest
// set bit is in the first such byte.
std::uint64_t bytes_below(std::uint64_t v, std::uint64_t n) { return (v - kOnes * n) & ~v & kHigh; }
std::uint64_t bytes_equal(std::uint64_t v, char c) { return bytes_below(v ^ (kOnes * static_cast<Byte>(c)), 1); }

std::uint64_t load8(const char* p) {
  std::uint64_t x;
  std::memcpy(&x, p, sizeof x);
  return x;
}

// The offset of the first byte a mask of 8 (bytes_below's) marks: in its lowest set bit on a little-endian machine;
// 0 elsewhere, and the caller steps on one byte at a time.
std::size_t first_marked(std::uint64_t mask) {
  if constexpr (std::endian::native == std::endian::little) return static_cast<std::size_t>(std::countr_zero(mask)) / 8;
  return 0;
}

// A mask of the bytes among the 8 at `p` that are not printable ASCII, or are '"' or '\\' (what string_end must look
// at): 0 when all 8 are plain. Strings are most of what the supervisor checks (a plan of 5,000 declarations, every done
// record's fidelity and outputs): a byte at a time they had been ~7k of its instructions a scenario (issue #20).
std::uint64_t special_bytes8(const char* p) {
  const std::uint64_t x = load8(p);
  return (x & kHigh) | bytes_below(x, 0x20) | bytes_equal(x, '"') | bytes_equal(x, '\\');
}

// A string token at `text[at]`: its end (one past the closing quote), or 0. `escapes`: whether it may hold any.
std::size_t string_end(std::string_view text, std::size_t at, bool escapes) {
  if (at >= text.size() || text[at] != '"') return 0;
  std::size_t i = at + 1;
  while (i < text.size()) {
    if (i + 8 <= text.size()) {  // 8 bytes at once: past them all, or (little-endian) to the first to look at
      const std::uint64_t special = special_bytes8(text.data() + i);
      if (special == 0) {
        i += 8;
        continue;
      }
      i += first_marked(special);
    }
    const char c = text[i];
    if (c == '"') return i + 1;
    if (c >= 0x20 && c != '\\' && static_cast<Byte>(c) < 0x80) {  // printable ASCII, most of what a worker writes
      ++i;
      continue;
    }
    std::size_t length;
    if (c == '\\')
      length = escapes ? escape_length(text, i) : 0;
    else if (static_cast<Byte>(c) < 0x20)
      length = 0;  // a raw control character: the lexer refuses it
    else
      length = utf8_length(text, i);
    if (length == 0) return 0;
    i += length;
  }
  return 0;
}

// A number token at `text[at]`: its end, or 0. Its grammar first, then the proof: parsed by nlohmann, dumped back the
// same (no "1E5", "-0", "1.50", nor a float it writes otherwise; numbers are rare in what a run pastes).
std::size_t number_end(std::string_view text, std::size_t at) {
  std::size_t i = at;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i > from;
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (!digits()) return 0;
  if (i < text.size() && text[i] == '.' && (++i, !digits())) return 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digits()) return 0;
  }
  const std::string_view token = text.substr(at, i - at);
  // An integer of up to 18 digits, no leading zero, not "-0": the lexer reads it as an integer (its range holds it)
  // and the serializer writes its digits back. Anything else is proven by nlohmann itself.
  const std::string_view integer = token.substr(token.starts_with('-') ? 1 : 0);
  if (integer.find_first_not_of("0123456789") == std::string_view::npos && integer.size() <= 18 &&
      (integer.size() == 1 || integer.front() != '0') && token != "-0")
    return i;
  const nlohmann::json value = nlohmann::json::parse(token.begin(), token.end(), nullptr, false);
  if (value.is_discarded() || value.dump() != token) return 0;
  return i;
}

// The value at `text[at]`: its end, or 0. With `member`, the value of the object's member `key` goes there.
std::size_t value_end(std::string_view text, std::size_t at, int depth, std::string_view key = {},
                      std::string_view* member = nullptr) {
  if (at >= text.size()) return 0;
  const char c = text[at];
  if (c == '"') return string_end(text, at, true);
  if (c == '-' || (c >= '0' && c <= '9')) return number_end(text, at);
  for (const std::string_view literal : {"true", "false", "null"})
    if (text.substr(at, literal.size()) == literal) return at + literal.size();
  if (c != '{' && c != '[') return 0;
  const char close = c == '{' ? '}' : ']';
  std::size_t i = at + 1;
  if (i < text.size() && text[i] == close) return i + 1;
  if (depth <= 0) return 0;
  std::string_view previous;  // the last key: each must sort after it, as a std::map keeps them
  for (bool first = true;; first = false) {
    if (c == '{') {
      const std::size_t key_end = string_end(text, i, false);  // no escapes: their content is the key
      if (key_end == 0) return 0;
      const std::string_view name = text.substr(i + 1, key_end - i - 2);
      if (!first && !(previous < name)) return 0;  // std::string's order: bytes as unsigned, as memcmp
      previous = name;
      i = key_end;
      if (i >= text.size() || text[i] != ':') return 0;
      ++i;
    }
    const std::size_t start = i;
    i = value_end(text, i, depth - 1);
    if (i == 0 || i >= text.size()) return 0;
    if (member && c == '{' && previous == key) *member = text.substr(start, i - start);
    if (text[i] == close) return i + 1;
    if (text[i] != ',') return 0;
    ++i;
  }
}

}  // namespace

std::size_t value_length(std::string_view text, int max_depth) { return value_end(text, 0, max_depth); }

std::size_t value_length(std::string_view text, int max_depth, std::string_view key, std::string_view& member) {
  return value_end(text, 0, max_depth, key, &member);
}

std::size_t plain_string_length(std::string_view text) { return string_end(text, 0, false); }

void append_indented(std::string& out, std::string_view value, unsigned indent) {
  // nlohmann's pretty form: "{\n", each member on a line of its own one level in ("key": value), ",\n" between, and
  // the closing brace on a line at the object's level; an empty object or array stays "{}" or "[]". Strings are copied
  // as they are (their escapes are the pretty dump's too); ',' and ':' outside them are separators only.
  out.reserve(out.size() + value.size() + value.size() / 2);
  std::size_t i = 0;
  while (i < value.size()) {
    const char c = value[i];
    if (c == '"') {
      std::size_t end = i + 1;
      // Bounded: `value` is value_length's by contract, but a string left open must not be read past its end.
      while (end < value.size()) {
        if (end + 8 <= value.size()) {  // 8 bytes at once, as string_end: a pasted declaration is mostly strings
          const std::uint64_t x = load8(value.data() + end), marked = bytes_equal(x, '"') | bytes_equal(x, '\\');
          if (marked == 0) {
            end += 8;
            continue;
          }
          end += first_marked(marked);
        }
        if (value[end] == '"') break;
        end += value[end] == '\\' ? 2 : 1;
      }
      end = std::min(end, value.size() - 1);
      out.append(value, i, end + 1 - i);
      i = end + 1;
      continue;
    }
    if ((c == '{' || c == '[') && i + 1 < value.size() && value[i + 1] == (c == '{' ? '}' : ']')) {
      out.append(value, i, 2);
      i += 2;
      continue;
    }
    if (c == '{' || c == '[') {
      out += c;
      out += '\n';
      out.append(++indent, ' ');
    } else if (c == '}' || c == ']') {
      out += '\n';
      out.append(--indent, ' ');
      out += c;
    } else if (c == ',') {
      out += ",\n";
      out.append(indent, ' ');
    } else if (c == ':') {
      out += ": ";
    } else {
      out += c;
    }
    ++i;
  }
}

}  // namespace parity::canonical
