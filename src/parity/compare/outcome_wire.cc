// append_outcome_wire / outcome_from_wire (see outcome_wire.h): lengths, counts and doubles as their native bytes,
// a JSON value as a kind byte and its payload.
#include "outcome_wire.h"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

namespace parity {
namespace {

using json = nlohmann::json;

// A JSON value's kind on the wire: one byte before its payload.
enum Kind : char { kNull, kFalse, kTrue, kInteger, kUnsigned, kFloat, kString, kArray, kObject, kBinary };

template <typename T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

void put_string(std::string& out, std::string_view s) {
  put<std::uint64_t>(out, s.size());
  out.append(s);
}

void put_json(std::string& out, const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      out.push_back(kNull);
      return;
    case json::value_t::boolean:
      out.push_back(v.get<bool>() ? kTrue : kFalse);
      return;
    case json::value_t::number_integer:
      out.push_back(kInteger), put(out, v.get<std::int64_t>());
      return;
    case json::value_t::number_unsigned:
      out.push_back(kUnsigned), put(out, v.get<std::uint64_t>());
      return;
    case json::value_t::number_float:
      out.push_back(kFloat), put(out, v.get<double>());
      return;
    case json::value_t::string:
      out.push_back(kString), put_string(out, v.get_ref<const std::string&>());
      return;
    case json::value_t::array:
      out.push_back(kArray), put<std::uint64_t>(out, v.size());
      for (const json& e : v) put_json(out, e);
      return;
    case json::value_t::object:
      out.push_back(kObject), put<std::uint64_t>(out, v.size());
      for (const auto& [key, value] : v.get_ref<const json::object_t&>()) put_string(out, key), put_json(out, value);
      return;
    case json::value_t::binary: {
      const json::binary_t& b = v.get_binary();
      out.push_back(kBinary), put_string(out, {reinterpret_cast<const char*>(b.data()), b.size()});
      out.push_back(b.has_subtype()), put<std::uint64_t>(out, b.has_subtype() ? b.subtype() : 0);
      return;
    }
    case json::value_t::discarded:
      break;
  }
  throw std::logic_error("compare --jobs: a discarded JSON value in an outcome");
}

// Reads what the put functions wrote, checking every length against what is left.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}

  template <typename T>
  T get() {
    T value;
    std::memcpy(&value, take(sizeof value).data(), sizeof value);
    return value;
  }

  std::string get_string() { return std::string(take(get<std::uint64_t>())); }

  json get_json() {
    switch (get<char>()) {
      case kNull:
        return nullptr;
      case kFalse:
        return false;
      case kTrue:
        return true;
      case kInteger:
        return get<std::int64_t>();
      case kUnsigned:
        return get<std::uint64_t>();
      case kFloat:
        return get<double>();
      case kString:
        return get_string();
      case kArray: {
        json a = json::array();
        json::array_t& elements = a.get_ref<json::array_t&>();
        for (std::uint64_t n = count(); n > 0; --n) elements.push_back(get_json());
        return a;
      }
      case kObject: {
        json o = json::object();
        json::object_t& members = o.get_ref<json::object_t&>();
        for (std::uint64_t n = count(); n > 0; --n) {
          std::string key = get_string();
          members.emplace_hint(members.end(), std::move(key), get_json());  // written in the map's order
        }
        return o;
      }
      case kBinary: {
        const std::string_view data = take(get<std::uint64_t>());
        std::vector<std::uint8_t> b(data.begin(), data.end());
        const bool has_subtype = get<char>();
        const auto subtype = get<std::uint64_t>();
        return has_subtype ? json::binary(std::move(b), static_cast<json::binary_t::subtype_type>(subtype))
                           : json::binary(std::move(b));
      }
      default:
        throw std::runtime_error("compare --jobs: an unknown JSON kind in a compare process's outcome");
    }
  }

  /// A count of elements, each at least one byte: more than the bytes left is a corrupt message.
  std::uint64_t count() {
    const auto n = get<std::uint64_t>();
    if (n > rest_.size()) short_message();
    return n;
  }

  bool done() const { return rest_.empty(); }

 private:
  std::string_view take(std::uint64_t n) {
    if (n > rest_.size()) short_message();
    const std::string_view taken = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return taken;
  }

  [[noreturn]] static void short_message() {
    throw std::runtime_error("compare --jobs: a compare process's outcome ends short");
  }

  std::string_view rest_;
};

}  // namespace

void append_outcome_wire(const ScenarioOutcome& o, std::string& out) {
  for (const std::string* s : {&o.id, &o.status, &o.message, &o.repro}) put_string(out, *s);
  put<std::uint64_t>(out, o.checks.size());
  for (const Check& c : o.checks) {
    put_string(out, c.check), out.push_back(c.ok), put_string(out, c.path), put_string(out, c.message);
    put_json(out, c.details);
  }
  put<std::uint64_t>(out, o.skipped.size());
  for (const SkippedCheck& s : o.skipped)
    for (const std::string* field : {&s.check, &s.side, &s.kind, &s.reason}) put_string(out, *field);
  put_json(out, o.meta), put_json(out, o.policy);
  out.push_back(o.coverage.has_value());
  if (o.coverage) {
    put(out, o.coverage->leaves), put<std::uint64_t>(out, o.coverage->checks.size());
    for (const auto& [check, leaves] : o.coverage->checks) put_string(out, check), put(out, leaves);
  }
  for (const double seconds : {o.gold_seconds, o.candidate_seconds, o.compare_seconds}) put(out, seconds);
}

ScenarioOutcome outcome_from_wire(std::string_view bytes) {
  Reader in(bytes);
  ScenarioOutcome o;
  for (std::string* s : {&o.id, &o.status, &o.message, &o.repro}) *s = in.get_string();
  o.checks.resize(in.count());
  for (Check& c : o.checks) {
    c.check = in.get_string(), c.ok = in.get<char>(), c.path = in.get_string(), c.message = in.get_string();
    c.details = in.get_json();
  }
  o.skipped.resize(in.count());
  for (SkippedCheck& s : o.skipped)
    for (std::string* field : {&s.check, &s.side, &s.kind, &s.reason}) *field = in.get_string();
  o.meta = in.get_json(), o.policy = in.get_json();
  if (in.get<char>()) {
    Coverage& coverage = o.coverage.emplace();
    coverage.leaves = in.get<std::int64_t>();
    for (std::uint64_t n = in.count(); n > 0; --n) {
      std::string check = in.get_string();
      coverage.checks.emplace_hint(coverage.checks.end(), std::move(check), in.get<std::int64_t>());
    }
  }
  for (double* seconds : {&o.gold_seconds, &o.candidate_seconds, &o.compare_seconds}) *seconds = in.get<double>();
  if (!in.done()) throw std::runtime_error("compare --jobs: a compare process's outcome has bytes left over");
  return o;
}

}  // namespace parity
