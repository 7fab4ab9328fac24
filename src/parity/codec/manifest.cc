// Reads and writes manifest.json (see manifest.h); validation errors name the file and the field.
#include "manifest.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <functional>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "atomic_file.h"
#include "canonical_json.h"
#include "json_input.h"
#include "json_output.h"
#include "outcome.h"
#include "safe_file.h"

using json = nlohmann::json;

namespace parity {
namespace {

constexpr std::size_t kReadableChars = 80;  // of the id, in its file name: enough to recognise it in `ls`
constexpr std::size_t kDigestHexDigits = 16;

std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

// One 64-byte block of SHA-256 into the state `h`.
void sha256_block(std::uint32_t (&h)[8], const unsigned char* block) {
  static constexpr std::uint32_t k[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
      0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
      0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
      0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
      0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
      0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
      0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
  std::uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = std::uint32_t{block[4 * i]} << 24 | std::uint32_t{block[4 * i + 1]} << 16 |
           std::uint32_t{block[4 * i + 2]} << 8 | std::uint32_t{block[4 * i + 3]};
  for (int i = 16; i < 64; ++i) {
    const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int i = 0; i < 64; ++i) {
    const std::uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
    const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
  }
  const std::uint32_t add[8] = {a, b, c, d, e, f, g, hh};
  for (int i = 0; i < 8; ++i) h[i] += add[i];
}

// SHA-256 (FIPS 180-4): the file name's digest is the same on every machine, so a run resumed or merged elsewhere
// names its files as the first did. Names of ordinary ids need no secrecy; SHA-256 is just a well-spread hash. Written
// here, not taken from a library, because the codec links none that has it. The message's whole blocks are hashed in
// place and only its tail is padded, in a buffer of two blocks: the supervisor names the result file of every
// scenario it is told about, and a copy padded byte by byte had been ~9k of its instructions a scenario (issue #20).
std::array<std::uint8_t, 32> sha256(std::string_view message) {
  std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const auto* data = reinterpret_cast<const unsigned char*>(message.data());
  const std::size_t whole = message.size() / 64 * 64;
  for (std::size_t block = 0; block < whole; block += 64) sha256_block(h, data + block);
  // The tail, 0x80, zeros to 56 bytes modulo 64, and the message's length in bits, big-endian.
  unsigned char tail[128] = {};
  const std::size_t rest = message.size() - whole;
  if (rest) std::memcpy(tail, data + whole, rest);
  tail[rest] = 0x80;
  const std::size_t padded = rest < 56 ? 64 : 128;
  const std::uint64_t bits = static_cast<std::uint64_t>(message.size()) * 8;
  for (int i = 0; i < 8; ++i) tail[padded - 1 - i] = static_cast<unsigned char>(bits >> (i * 8));
  for (std::size_t block = 0; block < padded; block += 64) sha256_block(h, tail + block);
  std::array<std::uint8_t, 32> digest{};
  for (int i = 0; i < 32; ++i) digest[i] = static_cast<std::uint8_t>(h[i / 4] >> (24 - 8 * (i % 4)));
  return digest;
}

bool is_word_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
}

// The id as a file name's readable part, appended to `out`: word characters kept, each run of anything else one '_',
// and a '.' only between two kept characters (so never "..", never leading).
void append_readable_part(const std::string& id, std::string& out) {
  const std::size_t start = out.size();
  for (char ch : id) {
    if (out.size() - start >= kReadableChars) break;
    const bool dot_ok = ch == '.' && out.size() > start && out.back() != '.';
    if (is_word_char(ch) || dot_ok)
      out += ch;
    else if (out.size() == start || out.back() != '_')
      out += '_';
  }
  if (out.size() == start) out += '_';
}

// The role goes into the commands parity prints (run_command): only a role `parity run --role` accepts is one.
void check_role(const json& backend, const std::function<ManifestError(const std::string&)>& fail) {
  if (!backend.is_object() || !backend.contains("role")) return;
  const json& role = backend.at("role");
  for (const char* known : kRoles)
    if (role.is_string() && role.get<std::string>() == known) return;
  throw fail("backend.role " + role.dump(-1, ' ', true, json::error_handler_t::replace) + " is not a role (" +
             kRoles[0] + " or " + kRoles[1] + ")");
}

constexpr const char* kEntryIndent = "  ";  // a scenario entry's, inside the manifest's "scenarios" array

std::string dump_manifest_json(const json& value) { return dump_json(value, 1); }

// Everything but the scenarios, which stay an empty array.
json manifest_header(const Manifest& m) {
  return {{"format", "parity-manifest"},
          {"version", kManifestVersion},
          {"backend", m.backend},
          {"environment", m.environment},
          {"run", m.run},
          {"complete", m.complete},
          {"scenarios", json::array()}};
}

}  // namespace

std::string result_file_for(const std::string& id) {
  static constexpr char kHex[] = "0123456789abcdef";
  static constexpr std::string_view kSuffix = ".parity";
  const std::array<std::uint8_t, 32> digest = sha256(id);
  // Built in place: the supervisor names the files of every record it takes.
  std::string file(kResultsSubdir);
  // Room for the pickle's name too (pickle_file_for appends to it).
  file.reserve(file.size() + 2 + kReadableChars + kDigestHexDigits + kSuffix.size() +
               std::string_view(kPickleSuffix).size());
  file += '/';
  append_readable_part(id, file);
  file += '-';
  for (std::size_t i = 0; i < kDigestHexDigits / 2; ++i) file += {kHex[digest[i] >> 4], kHex[digest[i] & 0xf]};
  file += kSuffix;
  return file;
}

std::string pickle_file_for(const std::string& id) { return result_file_for(id) + kPickleSuffix; }

bool pickle_offset_misplaced(const ScenarioRecord& record) {
  return record.pickle_offset && (record.file.empty() || !record.pickle_file.empty());
}

bool is_result_file_of(const std::string& id, const std::string& file) {
  return file == result_file_for(id) || file == pickle_file_for(id);
}

bool is_safe_result_path(const std::string& file) {
  const std::string prefix = std::string(kResultsSubdir) + "/";
  if (!file.starts_with(prefix)) return false;
  const std::string name = file.substr(prefix.size());
  return !name.empty() && name.size() <= 255 && name.front() != '.' && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

namespace {

// A field manifest_entry_text pastes (PastedFields): its canonical text.
struct Pasted {
  std::string_view text;
};

// Calls field(key, value) for each field a record's manifest entry holds, in the order of its keys (sorted, as a JSON
// object keeps them): the one list of them, for to_json and for manifest_entry_text, which writes the entry's text
// without building the object. With `pasted` (kPastes), a null JSON field with a pasted text is field(key, Pasted).
template <bool kPastes = false, class Field>
void for_each_entry_field(const ScenarioRecord& s, Field&& field, const PastedFields* pasted = nullptr) {
  const auto json_field = [&](const char* key, const json& value, std::string_view PastedFields::*text) {
    if (!value.is_null()) {
      field(key, value);
    } else if constexpr (kPastes) {
      if (!(pasted->*text).empty()) field(key, Pasted{pasted->*text});
    }
  };
  if (!s.error.is_null()) field("error", s.error);
  json_field("fidelity", s.fidelity, &PastedFields::fidelity);
  json_field("fidelity_values", s.fidelity_values, &PastedFields::fidelity_values);
  field("file", s.file);
  field("id", s.id);
  if constexpr (kPastes) {
    if (s.meta.is_null() && !pasted->meta.empty()) {
      field("meta", Pasted{pasted->meta});
    } else {
      field("meta", s.meta);
    }
  } else {
    field("meta", s.meta);
  }
  json_field("output", s.output, &PastedFields::output);
  json_field("pickle_error", s.pickle_error, &PastedFields::pickle_error);
  if (!s.pickle_file.empty()) field("pickle_file", s.pickle_file);
  if (s.pickle_offset) field("pickle_offset", *s.pickle_offset);
  field("seconds", s.seconds);
  field("status", s.status);
}

}  // namespace

json to_json(const ScenarioRecord& s) {
  json entry = json::object();
  for_each_entry_field(s, [&](const char* key, const auto& value) { entry[key] = value; });
  return entry;
}

namespace {

// entry.value(key, fallback), the value moved out of `entry`.
json taken(json& entry, const char* key, json fallback) {
  const auto found = entry.find(key);
  return found == entry.end() ? std::move(fallback) : std::move(*found);
}

// The entry's pickle_offset: none, or a byte offset (where in its result file is pickle_offset_misplaced's check).
std::optional<std::uint64_t> pickle_offset_of(const json& s, const std::string& id) {
  const auto found = s.find("pickle_offset");
  if (found == s.end()) return std::nullopt;
  if (!found->is_number_unsigned())
    throw std::invalid_argument("scenario " + id + ": pickle_offset " +
                                found->dump(-1, ' ', true, json::error_handler_t::replace) +
                                " is not a byte offset (a non-negative integer)");
  return found->get<std::uint64_t>();
}

// record_from_json, the entry's values moved out rather than copied (what is left of `s` is unspecified).
ScenarioRecord record_taken(json& s) {
  ScenarioRecord r;
  r.id = s.at("id").get<std::string>();
  r.status = s.at("status").get<std::string>();
  r.file = s.value("file", "");
  r.seconds = s.value("seconds", 0.0);
  // The large values (a scenario's declaration, its digests and their descriptions) are moved, not copied: a compare
  // reads two manifests of a record per scenario.
  r.error = taken(s, "error", json());
  r.meta = taken(s, "meta", json::object());
  r.fidelity = taken(s, "fidelity", json());
  r.fidelity_values = taken(s, "fidelity_values", json());
  r.pickle_file = s.value("pickle_file", "");
  r.pickle_error = taken(s, "pickle_error", json());
  r.output = taken(s, "output", json());
  for (const std::string& f : {r.file, r.pickle_file})
    if (!f.empty() && !is_safe_result_path(f))
      throw std::invalid_argument("scenario " + r.id + ": result file '" + f +
                                  "' is not a file of the results directory's " + kResultsSubdir + "/");
  r.pickle_offset = pickle_offset_of(s, r.id);
  if (pickle_offset_misplaced(r))
    throw std::invalid_argument("scenario " + r.id +
                                ": pickle_offset needs a result file to be in, and no pickle_file beside it");
  return r;
}

}  // namespace

ScenarioRecord record_from_json(const json& s) {
  json entry = s;
  return record_taken(entry);
}

ScenarioRecord record_from_json(json&& entry) { return record_taken(entry); }

json to_json(const Manifest& m) {
  json doc = manifest_header(m);
  json& scenarios = doc["scenarios"];
  for (const ScenarioRecord& s : m.scenarios) scenarios.push_back(to_json(s));
  return doc;
}

bool run_failed(const std::vector<ScenarioRecord>& records) {
  for (const ScenarioRecord& r : records)
    if (is_failing_run_status(r.status)) return true;
  return false;
}

std::string utc_timestamp() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

void write_manifest(const Manifest& m) {
  std::vector<std::string> texts;
  texts.reserve(m.scenarios.size());
  for (const ScenarioRecord& s : m.scenarios) texts.push_back(manifest_entry_text(s));
  std::vector<const std::string*> entries;
  for (const std::string& text : texts) entries.push_back(&text);
  write_manifest(m, entries);
}

namespace {

// manifest_entry_text's, with `pasted` when given (kPastes).
template <bool kPastes>
std::string entry_text(const ScenarioRecord& record, const PastedFields* pasted) {
  // What dump_manifest_json(to_json(record)) writes with every line after the first indented by kEntryIndent (its
  // place in the manifest), written straight from the record: to_json's copy of every value (a scenario's
  // declaration, its digests), the dump of that copy and a second pass over the text had been a third of the
  // supervisor's work per scenario (callgrind, issue #20). The fields are to_json's (for_each_entry_field).
  constexpr unsigned kFieldIndent = 3;  // kEntryIndent and one level
  std::string text;
  text.reserve(1024);
  nlohmann::detail::serializer<json> out(nlohmann::detail::output_adapter<char, std::string>(text), ' ',
                                         json::error_handler_t::replace);
  bool first = true;
  const auto field = [&](const char* key, const auto& value) {
    text += first ? "{\n" : ",\n";
    first = false;
    text.append(kFieldIndent, ' ');
    text += '"';
    text += key;  // a plain word: nothing to escape
    text += "\": ";
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, Pasted>)
      canonical::append_indented(text, value.text, kFieldIndent);  // what the dump of its parse writes
    else
      out.dump(value, true, false, 1, kFieldIndent);
  };
  for_each_entry_field<kPastes>(record, field, pasted);
  text += '\n';
  text += kEntryIndent;
  text += '}';
  return text;
}

}  // namespace

std::string manifest_entry_text(const ScenarioRecord& record) { return entry_text<false>(record, nullptr); }

std::string manifest_entry_text(const ScenarioRecord& record, const PastedFields& pasted) {
  return entry_text<true>(record, &pasted);
}

std::string manifest_text(const Manifest& m, const std::vector<const std::string*>& entries) {
  // The document with no scenarios, then the entries spliced into its empty array: "scenarios" is a top-level key,
  // the only line that reads so (deeper keys are indented further, and strings hold no raw newline).
  std::string doc = dump_manifest_json(manifest_header(m));
  if (entries.empty()) return doc + "\n";
  const std::string empty = "\n \"scenarios\": []";
  const std::size_t at = doc.find(empty);
  if (at == std::string::npos) throw std::logic_error("manifest_text: no scenarios array in the document");
  std::size_t size = doc.size() + 8;
  for (const std::string* entry : entries) size += entry->size() + 4;
  std::string text;
  text.reserve(size);
  text.append(doc, 0, at + empty.size() - 1);  // up to and including '['
  for (std::size_t i = 0; i < entries.size(); ++i) {
    text += i ? ",\n" : "\n";
    text += kEntryIndent;
    text += *entries[i];
  }
  text += "\n ]";
  text.append(doc, at + empty.size(), std::string::npos);
  return text + "\n";
}

void write_manifest(const Manifest& m, const std::vector<const std::string*>& entries) {
  write_file_atomically(m.dir / kManifestName, manifest_text(m, entries));
}

Manifest read_manifest(const std::filesystem::path& dir) {
  const auto file = dir / kManifestName;
  auto fail = [&](const std::string& why) -> ManifestError { return ManifestError(file.string() + ": " + why); };
  if (!std::filesystem::is_directory(dir))
    throw ManifestError(dir.string() + ": not a results directory (it does not exist or is not a directory)");
  std::string text;
  try {
    text = read_regular_text_file(dir, kManifestName);
  } catch (const UnsafeFileError& e) {
    throw ManifestError(e.what());
  } catch (const std::system_error& e) {
    if (e.code() == std::errc::no_such_file_or_directory)
      throw fail("missing: is this a directory written by 'parity run --out'?");
    throw fail(std::string("cannot read: ") + e.code().message());
  }
  Manifest m;
  m.dir = dir;
  try {
    json doc = parse_json(text, "");
    if (doc.value("format", "") != "parity-manifest") throw fail("not a parity manifest");
    // Checked before converting: a float out of int's range (a damaged file) would convert with undefined behaviour.
    if (!doc.at("version").is_number_integer()) throw fail("has no integer \"version\"");
    const std::int64_t version = doc.at("version").get<std::int64_t>();
    if (version > kManifestVersion)
      throw fail("written by a newer parity (manifest version " + std::to_string(version) +
                 "); upgrade parity or re-run with this one");
    m.backend = doc.at("backend");
    check_role(m.backend, fail);
    m.environment = doc.value("environment", json::object());
    m.run = doc.value("run", json::object());
    m.complete = doc.value("complete", false);
    for (json& s : doc.at("scenarios")) m.scenarios.push_back(record_taken(s));
  } catch (const json::exception& e) {
    throw fail(std::string("malformed: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw fail(e.what());
  }
  return m;
}

}  // namespace parity
