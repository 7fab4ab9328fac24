// Checks of the replies a `parity run` worker sends (see protocol.h): the shape of each event, nothing more.
#include "protocol.h"

#include <initializer_list>

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

}  // namespace parity::protocol
