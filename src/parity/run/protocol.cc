// Checks of the replies a `parity run` worker sends (see protocol.h): the shape of each event, nothing more.
#include "protocol.h"

#include <initializer_list>
#include <iterator>

#include "canonical_json.h"
#include "json_input.h"
#include "outcome.h"

using json = nlohmann::json;

namespace parity::protocol {
namespace {

using Type = json::value_t;

// `object` has `field` of one of `types`; the message names the event and the field.
void require(const json& object, const char* what, const char* field, std::initializer_list<Type> types) {
  const auto found = object.find(field);
  if (found == object.end()) throw ProtocolError(std::string(what) + " without \"" + field + "\"");
  for (const Type type : types)
    if (found->type() == type) return;
  throw ProtocolError(std::string(what) + " with a mistyped \"" + field + "\"");
}

void check_ready(const json& reply) {
  require(reply, kReady, field::kBackend, {Type::object});
  require(reply, kReady, field::kEnvironment, {Type::object});
  require(reply, kReady, field::kErrors, {Type::array});
  require(reply, kReady, field::kScenarios, {Type::array});
  for (const json& s : reply.at(field::kScenarios)) {
    if (!s.is_object()) throw ProtocolError("ready with a scenario that is not an object");
    require(s, "a ready scenario", field::kId, {Type::string});
    require(s, "a ready scenario", field::kMeta, {Type::object});
    require(s, "a ready scenario", field::kFile, {Type::string});
    require(s, "a ready scenario", field::kPart, {Type::number_integer, Type::number_unsigned});
  }
}

// The shape of a done record; whether it is the right scenario's is the supervisor's check (runner.cc).
void check_done(const json& reply) {
  require(reply, kDone, field::kRecord, {Type::object});
  require(reply, kDone, field::kRetiring, {Type::boolean});
  if (reply.contains(field::kLibraries)) {  // {name: version} of what the worker has imported (runner.cc)
    require(reply, kDone, field::kLibraries, {Type::object});
    for (const auto& [name, version] : reply.at(field::kLibraries).items())
      if (!version.is_string()) throw ProtocolError("done with a library version that is not a string");
  }
  const json& record = reply.at(field::kRecord);
  require(record, "a done record", "id", {Type::string});
  require(record, "a done record", "status", {Type::string});
  require(record, "a done record", "file", {Type::string});
  require(record, "a done record", "seconds", {Type::number_float, Type::number_integer, Type::number_unsigned});
  // What a worker records itself: any run status but timeout, which only the supervisor gives (it stopped the
  // worker); crash only for a MemoryError, after which the worker retires.
  const std::string status = record.at("status").get<std::string>();
  if (listed(kRunStatuses, status) && status != "timeout") return;
  throw ProtocolError("a done record with an unknown status");
}

}  // namespace

json parse_reply(const std::string& line) {
  json reply;
  try {
    reply = parse_json(line, "");  // depth-limited (json_input.h): a scenario may write any line here
  } catch (const json::exception&) {
    throw ProtocolError("not JSON");
  }
  if (!reply.is_object()) throw ProtocolError("not a JSON object");
  require(reply, "a reply", kEvent, {Type::string});
  const std::string event = reply.at(kEvent).get<std::string>();
  if (event == kImporting) {
    require(reply, event.c_str(), field::kFile, {Type::string});
  } else if (event == kFatal) {
    require(reply, event.c_str(), field::kMessage, {Type::string});
    if (reply.contains(field::kNoTests)) require(reply, event.c_str(), field::kNoTests, {Type::boolean});
  } else if (event == kLoaded) {
    require(reply, event.c_str(), field::kForkable, {Type::boolean});
  } else if (event == kFound) {
    require(reply, event.c_str(), field::kPart, {Type::object});
  } else if (event == kReady) {
    check_ready(reply);
  } else if (event == kDone) {
    check_done(reply);
  } else if (event != kImported && event != kStarted) {
    throw ProtocolError("an unknown event");
  }
  return reply;
}

namespace {

// How deeply a pasted field may nest (read_plain_done): a worker's are objects of strings; deeper ones are parsed.
constexpr int kPastedDepth = 64;

// The fields a worker's done record holds (manifest.cc's to_json, less meta), in the order of their keys.
enum class DoneField {
  kError,
  kFidelity,
  kFidelityValues,
  kFile,
  kId,
  kOutput,
  kPickleError,
  kPickleFile,
  kPickleOffset,
  kSeconds,
  kStatus,
  kNone
};
constexpr std::string_view kDoneFields[] = {"error",  "fidelity",     "fidelity_values", "file",          "id",
                                            "output", "pickle_error", "pickle_file",     "pickle_offset", "seconds",
                                            "status"};

// A number token's value as nlohmann's lexer reads it, the token's length in `length`; nullopt when it is not one.
std::optional<double> number_at(std::string_view text, std::size_t& length) {
  length = text.find_first_not_of("-+.eE0123456789");
  if (length == std::string_view::npos || length == 0) return std::nullopt;
  const std::string_view token = text.substr(0, length);
  const json value = json::parse(token.begin(), token.end(), nullptr, false);
  if (!value.is_number()) return std::nullopt;
  return value.get<double>();  // what record_from_json's value("seconds", 0.0) makes of it
}

// A plain unsigned integer token (digits, no sign, no leading zero but "0", up to 19 digits: within uint64_t, where
// nlohmann's lexer reads it as an unsigned number), its length in `length`; nullopt for anything else.
std::optional<std::uint64_t> unsigned_at(std::string_view text, std::size_t& length) {
  length = text.find_first_not_of("0123456789");
  if (length == std::string_view::npos || length == 0 || length > 19 || (text[0] == '0' && length > 1))
    return std::nullopt;
  std::uint64_t value = 0;
  for (const char digit : text.substr(0, length)) value = value * 10 + static_cast<std::uint64_t>(digit - '0');
  return value;
}

}  // namespace

std::optional<PlainDone> read_plain_done(std::string_view line) {
  constexpr std::string_view kHead = R"({"event":"done","record":{)";
  if (!line.starts_with(kHead)) return std::nullopt;
  PlainDone done;
  std::string_view text = line.substr(kHead.size());
  // Where each field's value goes: a string's content, or an object's text.
  std::string_view* const strings[std::size(kDoneFields)] = {nullptr,  nullptr, nullptr,     &done.file,
                                                             &done.id, nullptr, nullptr,     &done.pickle_file,
                                                             nullptr,  nullptr, &done.status};
  std::string_view* const objects[std::size(kDoneFields)] = {
      &done.error, &done.pasted.fidelity, &done.pasted.fidelity_values, nullptr,
      nullptr,     &done.pasted.output,   &done.pasted.pickle_error};
  int last = -1;      // the last field read: each sorts after it (no duplicate, to_json's order)
  unsigned seen = 0;  // a bit per field
  while (true) {
    const std::size_t key_length = canonical::plain_string_length(text);
    if (key_length == 0) return std::nullopt;
    const std::string_view key = text.substr(1, key_length - 2);
    int field = last + 1;
    while (field < static_cast<int>(DoneField::kNone) && kDoneFields[field] != key) ++field;
    if (field == static_cast<int>(DoneField::kNone) || text.size() == key_length || text[key_length] != ':')
      return std::nullopt;  // meta, an unknown field, one out of order or repeated: parsed, as any reply
    last = field;
    seen |= 1u << field;
    text.remove_prefix(key_length + 1);
    std::size_t length = 0;
    if (std::string_view* const string = strings[field]) {
      length = canonical::plain_string_length(text);
      if (length == 0) return std::nullopt;
      *string = text.substr(1, length - 2);
    } else if (field == static_cast<int>(DoneField::kPickleOffset)) {
      const std::optional<std::uint64_t> offset = unsigned_at(text, length);
      if (!offset) return std::nullopt;
      done.pickle_offset = *offset;
    } else if (field == static_cast<int>(DoneField::kSeconds)) {
      const std::optional<double> seconds = number_at(text, length);
      if (!seconds) return std::nullopt;
      done.seconds = *seconds;
    } else {
      // An object, pasted as it is (a null or another type is parsed: the manifest writes those otherwise).
      length = text.starts_with('{') ? canonical::value_length(text, kPastedDepth) : 0;
      if (length == 0) return std::nullopt;
      *objects[field] = text.substr(0, length);
    }
    text.remove_prefix(length);
    if (text.starts_with('}')) break;
    if (!text.starts_with(',')) return std::nullopt;
    text.remove_prefix(1);
  }
  // parse_reply's checks: the fields it requires, and a status a worker may give.
  for (const DoneField required : {DoneField::kFile, DoneField::kId, DoneField::kSeconds, DoneField::kStatus})
    if (!(seen & (1u << static_cast<int>(required)))) return std::nullopt;
  if (!listed(kRunStatuses, done.status) || done.status == "timeout") return std::nullopt;
  if (text == R"(},"retiring":false})") return done;
  if (text != R"(},"retiring":true})") return std::nullopt;
  done.retiring = true;
  return done;
}

std::optional<PlainReady> read_plain_ready(std::string_view line) {
  std::string_view text = line;
  // Takes `prefix`; false where the text does not go on so.
  const auto take = [&text](std::string_view prefix) {
    if (!text.starts_with(prefix)) return false;
    text.remove_prefix(prefix.size());
    return true;
  };
  // After `prefix`, a canonical object or array (`open`): its text, taken; empty where there is none.
  const auto value_after = [&](std::string_view prefix, char open, std::string_view key = {},
                               std::string_view* member = nullptr) -> std::string_view {
    if (!take(prefix) || !text.starts_with(open)) return {};
    std::string_view ignored;
    const std::size_t length = canonical::value_length(text, kPastedDepth, key, member ? *member : ignored);
    const std::string_view value = text.substr(0, length);
    text.remove_prefix(length);
    return value;
  };
  // After `prefix`, a string without escapes: its content, taken; nullopt where there is none.
  const auto plain_after = [&](std::string_view prefix) -> std::optional<std::string_view> {
    const std::size_t length = take(prefix) ? canonical::plain_string_length(text) : 0;
    if (length == 0) return std::nullopt;
    const std::string_view value = text.substr(1, length - 2);
    text.remove_prefix(length);
    return value;
  };
  const std::string_view backend = value_after(R"({"backend":)", '{');
  const std::string_view environment = value_after(R"(,"environment":)", '{');
  const std::string_view errors = value_after(R"(,"errors":)", '[');
  if (backend.empty() || environment.empty() || errors.empty() || !take(R"(,"event":"ready","scenarios":[)"))
    return std::nullopt;
  PlainReady ready;
  for (bool first = true; !take("]}"); first = false) {
    if (!first && !take(",")) return std::nullopt;
    PlainPlanned& s = ready.scenarios.emplace_back();
    const auto file = plain_after(R"({"file":)");
    const auto id = file ? plain_after(R"(,"id":)") : std::nullopt;
    if (!id) return std::nullopt;
    s.file = *file, s.id = *id;
    s.meta = value_after(R"(,"meta":)", '{', "timeout", &s.timeout);
    // The part a canonical number (value_length's: no NUL, byte-order mark or nesting, which a parse of the slice up
    // to the next '}' would have read past or built), then the object's end.
    const std::size_t length = s.meta.empty() || !take(R"(,"part":)") ? 0 : canonical::value_length(text, 0);
    if (length == 0 || !text.substr(length).starts_with('}')) return std::nullopt;
    const std::string_view part = text.substr(0, length);
    const json value = json::parse(part.begin(), part.end(), nullptr, false);
    if (!value.is_number_integer()) return std::nullopt;  // check_ready's, read as take_plan reads it
    s.part = value.get<int>();
    text.remove_prefix(length + 1);
  }
  if (!text.empty()) return std::nullopt;
  try {  // a few KB: parsed as the whole reply would have been
    ready.backend = parse_json(backend, "");
    ready.environment = parse_json(environment, "");
    ready.errors = parse_json(errors, "");
  } catch (const json::exception&) {
    return std::nullopt;
  }
  return ready;
}

}  // namespace parity::protocol
