// Glob matching (see glob.h): the pattern is split into one-character tokens and stars, then matched with the
// classic backtrack-to-the-last-star loop, which is exact for globs because every other token takes one character.
#include "glob.h"

#include <cstddef>
#include <utility>
#include <vector>

namespace parity {
namespace {

// The bytes of the UTF-8 sequence `lead` starts; 0 for a byte no sequence starts with.
std::size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  return (lead >> 3) == 0x1E ? 4 : 0;
}

// A UTF-8 string as code points; a byte that starts no valid sequence stands for itself.
std::u32string code_points(const std::string& s) {
  std::u32string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char lead = byte(i);
    const std::size_t length = sequence_length(lead);
    bool valid = length > 0 && i + length <= s.size();
    for (std::size_t k = 1; valid && k < length; ++k) valid = (byte(i + k) & 0xC0) == 0x80;
    if (!valid) {
      out.push_back(lead);
      ++i;
      continue;
    }
    char32_t cp = length == 1 ? lead : lead & (0x7F >> length);
    for (std::size_t k = 1; k < length; ++k) cp = (cp << 6) | (byte(i + k) & 0x3F);
    out.push_back(cp);
    i += length;
  }
  return out;
}

// One token of a pattern: a star, or a test of one character.
struct Token {
  enum Kind { kStar, kAny, kLiteral, kSet } kind = kLiteral;
  char32_t literal = 0;
  bool negated = false;
  std::vector<std::pair<char32_t, char32_t>> ranges;  // inclusive; a reversed range (z-a) holds nothing

  bool takes(char32_t c) const {
    if (kind == kAny) return true;
    if (kind == kLiteral) return c == literal;
    bool in = false;
    for (const auto& [low, high] : ranges) in = in || (low <= c && c <= high);
    return in != negated;
  }
};

// The set starting at pattern[open] == '[' as fnmatch.translate reads it: '!' negates, a ']' right after '[' or
// '[!' is a member, the set ends at the next ']'. Returns the token and the index after it; nothing when unclosed.
bool read_set(const std::u32string& p, std::size_t open, Token& token, std::size_t& next) {
  std::size_t j = open + 1;
  if (j < p.size() && p[j] == U'!') ++j;
  if (j < p.size() && p[j] == U']') ++j;
  while (j < p.size() && p[j] != U']') ++j;
  if (j >= p.size()) return false;
  token.kind = Token::kSet;
  std::size_t k = open + 1;
  if (p[k] == U'!') token.negated = true, ++k;
  while (k < j) {
    if (k + 2 < j && p[k + 1] == U'-') {
      token.ranges.emplace_back(p[k], p[k + 2]);
      k += 3;
    } else {
      token.ranges.emplace_back(p[k], p[k]);
      ++k;
    }
  }
  next = j + 1;
  return true;
}

// At p[i] == '[' under literal brackets: glob.escape's escape of '[' itself, "[[]" (a path holds no '*' or '?' to
// escape, and `[*]` there is a wildcard index).
bool escaped_bracket(const std::u32string& p, std::size_t i) {
  return i + 2 < p.size() && p[i + 1] == U'[' && p[i + 2] == U']';
}

std::vector<Token> tokens_of(const std::u32string& p, bool literal_brackets) {
  std::vector<Token> tokens;
  for (std::size_t i = 0; i < p.size();) {
    Token token;
    if (literal_brackets && p[i] == U'[') {
      token.literal = U'[';
      i += escaped_bracket(p, i) ? 3 : 1;
    } else if (p[i] == U'*') {
      token.kind = Token::kStar;
      ++i;
      if (!tokens.empty() && tokens.back().kind == Token::kStar) continue;  // '**' is '*'
    } else if (p[i] == U'?') {
      token.kind = Token::kAny;
      ++i;
    } else if (p[i] != U'[' || !read_set(p, i, token, i)) {
      token.literal = p[i];
      ++i;
    }
    tokens.push_back(std::move(token));
  }
  return tokens;
}

}  // namespace

bool glob_match(const std::string& pattern, const std::string& text, bool literal_brackets) {
  const std::vector<Token> tokens = tokens_of(code_points(pattern), literal_brackets);
  const std::u32string s = code_points(text);
  std::size_t t = 0, c = 0;
  // The last star seen and where its run of characters now ends: on a mismatch the star takes one more.
  std::size_t star = tokens.size(), star_end = 0;
  while (c < s.size()) {
    if (t < tokens.size() && tokens[t].kind == Token::kStar) {
      star = t++, star_end = c;
    } else if (t < tokens.size() && tokens[t].takes(s[c])) {
      ++t, ++c;
    } else if (star < tokens.size()) {
      t = star + 1, c = ++star_end;
    } else {
      return false;
    }
  }
  while (t < tokens.size() && tokens[t].kind == Token::kStar) ++t;
  return t == tokens.size();
}

}  // namespace parity
