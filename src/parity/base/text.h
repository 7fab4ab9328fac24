// Text from files and scenarios made safe for the places it goes: a terminal (printable) and a shell (shell_quote).
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace parity {

/// Decodes one UTF-8 sequence at `at`; returns its length, or 0 if it is not valid UTF-8 (bad lead or continuation
/// bytes, overlong forms, beyond U+10FFFF). A surrogate decodes, as one code point. `cp` receives the code point.
std::size_t decode_utf8(std::string_view text, std::size_t at, char32_t& cp);

/// Whether a terminal would act on `cp` rather than show it, or show nothing: C0 and C1 controls, DEL, and the
/// invisible formatting characters (bidi overrides and isolates, zero-width characters, line separators), and
/// surrogates, which are no characters at all.
bool is_unprintable(char32_t cp);

/// Whether printable() keeps line breaks (a multi-line message, a traceback) or escapes them (an id, a name).
enum class Newlines { kEscape, kKeep };

/// `text` as a terminal may show it: every unprintable character escaped visibly (`\x1b`, `\u202e`, `\n`), every
/// byte of malformed UTF-8 as `\xNN`; with Newlines::kKeep, '\n' and '\t' stay. For whatever came from a results
/// directory, a report or a scenario, at the moment it is printed: a name cannot erase the screen, move the
/// cursor to forge a line, or set the window title.
std::string printable(std::string_view text, Newlines newlines = Newlines::kEscape);

/// Prints "parity COMMAND: MESSAGE" on stderr, the message printable() with its line breaks kept: for every error
/// or notice that may quote a file, a manifest or a scenario.
void print_line(const char* command, std::string_view message);
/// The same on `out`.
void print_line(std::FILE* out, const char* command, std::string_view message);

/// `s` quoted for a POSIX shell: as it is when it needs no quotes, else in single quotes. Every piece of a command
/// parity prints for people to paste goes through it, so that no value from a file can add a command.
std::string shell_quote(std::string_view s);

/// The words quoted one by one (shell_quote) and joined by spaces: one command line.
std::string shell_join(const std::vector<std::string>& words);

/// Whether a backend spec names a file (a "/" in it, or a .py name) rather than a built-in name or a dotted module:
/// such a spec means a path relative to where it was written (as python/parity/trust.py's _path_like reads it).
bool looks_like_path(std::string_view spec);

}  // namespace parity
