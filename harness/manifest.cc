// Reads and writes manifest.json (see manifest.h); validation errors name the file and the field.
#include "manifest.h"

#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "atomic_file.h"
#include "safe_file.h"

using json = nlohmann::json;

namespace parity {

json to_json(const ScenarioRecord& s) {
  json entry = {{"id", s.id}, {"status", s.status}, {"file", s.file}, {"seconds", s.seconds}, {"meta", s.meta}};
  if (!s.error.is_null()) entry["error"] = s.error;
  if (!s.fidelity.is_null()) entry["fidelity"] = s.fidelity;
  if (!s.pickle_file.empty()) entry["pickle_file"] = s.pickle_file;
  if (!s.pickle_error.is_null()) entry["pickle_error"] = s.pickle_error;
  return entry;
}

ScenarioRecord record_from_json(const json& s) {
  ScenarioRecord r;
  r.id = s.at("id").get<std::string>();
  r.status = s.at("status").get<std::string>();
  r.file = s.value("file", "");
  r.seconds = s.value("seconds", 0.0);
  r.error = s.value("error", json());
  r.meta = s.value("meta", json::object());
  r.fidelity = s.value("fidelity", json());
  r.pickle_file = s.value("pickle_file", "");
  r.pickle_error = s.value("pickle_error", json());
  for (const std::string& f : {r.file, r.pickle_file})
    if (f.find("..") != std::string::npos || (!f.empty() && f.front() == '/'))
      throw std::invalid_argument("scenario " + r.id + ": result file '" + f + "' is outside the results directory");
  return r;
}

json to_json(const Manifest& m) {
  json scenarios = json::array();
  for (const ScenarioRecord& s : m.scenarios) scenarios.push_back(to_json(s));
  return {{"format", "parity-manifest"},
          {"version", kManifestVersion},
          {"backend", m.backend},
          {"environment", m.environment},
          {"run", m.run},
          {"complete", m.complete},
          {"scenarios", scenarios}};
}

bool run_failed(const std::vector<ScenarioRecord>& records) {
  for (const ScenarioRecord& r : records)
    if (r.status == "error" || r.status == "xpass" || r.status == "crash" || r.status == "timeout") return true;
  return false;
}

std::string utc_timestamp() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

void write_manifest(const Manifest& m) {
  write_file_atomically(m.dir / kManifestName, to_json(m).dump(1, ' ', false, json::error_handler_t::replace) + "\n");
}

Manifest read_manifest(const std::filesystem::path& dir) {
  const auto file = dir / kManifestName;
  auto fail = [&](const std::string& why) -> ManifestError { return ManifestError(file.string() + ": " + why); };
  if (!std::filesystem::is_directory(dir))
    throw ManifestError(dir.string() + ": not a results directory (it does not exist or is not a directory)");
  std::stringstream text;
  try {
    text << read_regular_file(dir, kManifestName);
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
    const json doc = json::parse(text.str());
    if (doc.value("format", "") != "parity-manifest") throw fail("not a parity manifest");
    // Checked before converting: a float out of int's range (a damaged file) would convert with undefined behaviour.
    if (!doc.at("version").is_number_integer()) throw fail("has no integer \"version\"");
    const std::int64_t version = doc.at("version").get<std::int64_t>();
    if (version > kManifestVersion)
      throw fail("written by a newer parity (manifest version " + std::to_string(version) +
                 "); upgrade parity or re-run with this one");
    m.backend = doc.at("backend");
    m.environment = doc.value("environment", json::object());
    m.run = doc.value("run", json::object());
    m.complete = doc.value("complete", false);
    for (const json& s : doc.at("scenarios")) m.scenarios.push_back(record_from_json(s));
  } catch (const json::exception& e) {
    throw fail(std::string("malformed: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw fail(e.what());
  }
  return m;
}

}  // namespace parity
