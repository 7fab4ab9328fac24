// The results directory's manifest.json: what a run did, scenario by scenario (see docs/results-directory.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace parity {

/// 2: a run's pickle probe inside the result file (ScenarioRecord::pickle_offset); a reader reads 1 and 2.
inline constexpr int kManifestVersion = 2;
inline constexpr const char* kManifestName = "manifest.json";
inline constexpr const char* kResultsSubdir = "results";
/// The roles a run can have (`parity run --role`); a manifest naming another is refused.
inline constexpr const char* kRoles[] = {"gold", "candidate"};

/// A manifest that is missing, malformed or too new; the message names the file and says what to do.
struct ManifestError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One scenario (or one scenario module that failed to import) as a run recorded it.
struct ScenarioRecord {
  std::string id;
  std::string status;  ///< one of kRunStatuses (outcome.h)
  std::string file;    ///< result file relative to the results directory; empty when none was written
  double seconds = 0;
  nlohmann::json error;     ///< {type, message, traceback} for error, xfail and skip; null otherwise
  nlohmann::json meta;      ///< the scenario's declaration: module, function, params, rtol, atol, tags, xfail, source
  nlohmann::json fidelity;  ///< {path: digest} of every leaf as the scenario produced it (parity.probe)
  nlohmann::json fidelity_values;  ///< {path: type and short value}, beside `fidelity`, for its failures' messages
  std::string pickle_file;         ///< the outputs pickled with protocol 5, relative to the results directory: a run of
                                   ///< manifest version 1 (a file of its own); empty with pickle_offset
  /// Where in `file` the outputs pickled with protocol 5 start (manifest version 2: parity.probe.append_pickle writes
  /// them after the codec's data, one file a scenario and side); none when there is no pickle or it is pickle_file.
  std::optional<std::uint64_t> pickle_offset;
  nlohmann::json pickle_error;  ///< {type, message, traceback, path} when pickling the outputs raised
  nlohmann::json output;  ///< {stdout, stderr, truncated}: what it printed, each stream's tail (parity.capture); null
                          ///< when it printed nothing
};

struct Manifest {
  std::filesystem::path dir;
  nlohmann::json backend;      ///< name, spec, version, role, module, type_map
  nlohmann::json environment;  ///< python, numpy, platform, ...
  nlohmann::json run;          ///< parity version, scenario paths, selection, start time, total seconds
  bool complete = false;       ///< false while a run is in progress or when it was interrupted
  std::vector<ScenarioRecord> scenarios;
};

nlohmann::json to_json(const Manifest& manifest);
/// One scenario's entry, as the manifest and the run's worker processes (runner.cc) write it.
nlohmann::json to_json(const ScenarioRecord& record);
/// The entry back; throws nlohmann::json::exception for a missing or mistyped field and std::invalid_argument for
/// a result file that is not directly in the results directory (is_safe_result_path).
ScenarioRecord record_from_json(const nlohmann::json& entry);
/// The same, the entry's values moved out rather than copied (what is left of `entry` is unspecified).
ScenarioRecord record_from_json(nlohmann::json&& entry);
/// Where scenario `id`'s result file goes, relative to the results directory: "results/<name>.parity", the name
/// being the id made filesystem-safe (no '/', no "..", no leading '.', at most 80 characters) and 16 hex digits of
/// its SHA-256, so that distinct ids never share a file and no id names one outside the directory.
std::string result_file_for(const std::string& id);
/// What pickle_file_for adds to the result file's name.
inline constexpr const char* kPickleSuffix = ".pickle";
/// Where a run of manifest version 1 put its pickled outputs, in a file of their own: result_file_for(id) +
/// kPickleSuffix. A run now appends them to the result file (ScenarioRecord::pickle_offset), and removes such a file
/// left by an older run with the result file of a scenario it records as crashed or timed out (runner.cc).
std::string pickle_file_for(const std::string& id);
/// Whether `record` has a pickle_offset with no result file to be in, or with a pickle_file beside it: a record no run
/// writes, refused where one is read (record_from_json, and the supervisor's check of a worker's record).
bool pickle_offset_misplaced(const ScenarioRecord& record);
/// Whether `file` (relative to the results directory) is the result file or the pickle file parity writes for `id`.
bool is_result_file_of(const std::string& id, const std::string& file);
/// Whether `file` (relative to the results directory, as a manifest records it) names a file directly in its
/// results/ subdirectory: a run of another parity version may name it otherwise, but never outside.
bool is_safe_result_path(const std::string& file);
/// Whether a run with these records failed (`parity run` exits 1): a scenario ended in a failing run status.
bool run_failed(const std::vector<ScenarioRecord>& records);
/// The current time as manifests and reports record it: ISO 8601 UTC, e.g. 2026-11-22T05:39:14Z.
std::string utc_timestamp();
/// Writes DIR/manifest.json atomically.
void write_manifest(const Manifest& manifest);
/// One record's entry as manifest.json's text holds it, indented for its place in "scenarios": a run keeps each
/// finished record's, so that rewriting the manifest serializes only what changed.
std::string manifest_entry_text(const ScenarioRecord& record);
/// Canonical JSON texts (canonical_json.h) of a record's JSON fields, each standing in for the field of that name
/// when the record's own is null: a run pastes what a worker sent into the entry without parsing it (runner.cc).
/// Each is an object's text or empty (no such field; for meta: the record's own, even null).
struct PastedFields {
  std::string_view fidelity, fidelity_values, meta, output, pickle_error;
};
/// manifest_entry_text(record) for the record with those fields parsed from `pasted` into it, byte for byte.
std::string manifest_entry_text(const ScenarioRecord& record, const PastedFields& pasted);
/// manifest.json's text with `entries` (manifest_entry_text's, in order) as its scenarios; `manifest.scenarios` is
/// not read. Byte for byte what write_manifest writes for the records the entries were made from.
std::string manifest_text(const Manifest& manifest, const std::vector<const std::string*>& entries);
/// Writes DIR/manifest.json atomically from manifest_text(manifest, entries).
void write_manifest(const Manifest& manifest, const std::vector<const std::string*>& entries);
/// Reads DIR/manifest.json; throws ManifestError naming the file (and the field: a backend role not in kRoles).
Manifest read_manifest(const std::filesystem::path& dir);

}  // namespace parity
