// One scenario's verdict (compare_scenario): missing, errored, skipped or compared, then xfail and differences.
#include "verdict.h"

#include <pybind11/pybind11.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <system_error>
#include <tuple>

#include "compare_internal.h"
#include "deadline.h"
#include "messages.h"
#include "probes.h"
#include "record_check.h"
#include "safe_file.h"

namespace py = pybind11;
using json = nlohmann::json;

namespace parity {
namespace {

// The `missing` failure of each side that recorded no result file or has none at its path; returns whether any is.
bool missing_files(const Manifest& gold, const Manifest& candidate, const ScenarioRecord& g, const ScenarioRecord& c,
                   ScenarioOutcome& out) {
  for (const auto* side : {&g, &c}) {
    // symlink_status: a dangling symbolic link is there, and refused as one when read.
    if (side->file.empty() ||
        !std::filesystem::exists(std::filesystem::symlink_status((side == &g ? gold : candidate).dir / side->file))) {
      out.status = "fail";
      out.checks.push_back({"missing", false, "outputs",
                            "the " + std::string(side == &g ? "gold" : "candidate") + " result file '" + side->file +
                                "' is missing from " + (side == &g ? gold : candidate).dir.string()});
    }
  }
  return !out.checks.empty();
}

// Loads both result files and checks them; file problems become this scenario's error.
void compare_files(const Manifest& gold, const Manifest& candidate, const ScenarioRecord& g, const ScenarioRecord& c,
                   const CompareOptions& options, ScenarioOutcome& out) {
  if ((g.file.empty() || c.file.empty()) && missing_files(gold, candidate, g, c, out)) return;
  Node gn, cn;
  ResultBytes gold_bytes, candidate_bytes;  // each file read once: the pickle probe takes its pickle from here
  try {
    gn = read_result(gold.dir, g.file, options.limits, &gold_bytes);
    cn = read_result(candidate.dir, c.file, options.limits, &candidate_bytes);
  } catch (const FormatError& e) {
    // Whether a file is there is asked only when a read failed: most scenarios have both.
    if (missing_files(gold, candidate, g, c, out)) return;
    out.status = "error";
    out.checks.push_back({"error", false, "outputs", std::string("cannot read result file: ") + e.what()});
    return;
  }
  const StoredResults stored = stored_results(g, c, gold_bytes, candidate_bytes, options.pickle_probe);
  CheckList list;
  try {
    const Policy policy = policy_for(gold, candidate, out.meta, options);
    out.policy = policy.choice.to_json();
    out.policy["signed_zeros"] = policy.signed_zeros;
    Rebuilt rebuilt(gn, cn, g.meta, options);
    const BegunDigests digests = begin_digests(g, c, rebuilt);  // hashed by the values walk as it reads the arrays
    list = compare_outputs(gn, cn, policy, &digests.taps);
    run_probes(gold, candidate, g, c, stored, rebuilt, digests, options, list);
    check_assert_eq(out.id, out.meta, rebuilt, options, list);
  } catch (const std::invalid_argument& e) {
    out.status = "error";
    out.checks.push_back({"error", false, "outputs", std::string("invalid comparison policy: ") + e.what()});
    return;
  } catch (const FormatError& e) {
    out.status = "error";
    out.checks.push_back({"error", false, "outputs", std::string("cannot compare the result files: ") + e.what()});
    return;
  } catch (py::error_already_set& e) {    // parity's own bug, reported where it happened; the run goes on
    if (out_of_time_or_memory(e)) throw;  // compare_files_within_limits says which
    out.status = "error";
    out.checks.push_back({"error", false, "outputs", std::string("internal error while comparing: ") + e.what()});
    return;
  }
  record_checks(std::move(list), out);
}

// compare_files, with what a hostile pair can exhaust (time, memory) ending this scenario only: past
// options.timeout it is a timeout, out of memory an error, and the rest of the run is compared.
void compare_files_within_limits(const Manifest& gold, const Manifest& candidate, const ScenarioRecord& g,
                                 const ScenarioRecord& c, const CompareOptions& options, ScenarioOutcome& out) {
  auto stop = [&](const char* status, const std::string& message, const char* check = "error") {
    out.status = status;
    out.checks.clear();
    out.checks.push_back({check, false, "outputs", message});
  };
  const auto timed_out = [&](const std::string& where, const char* check = "error") {
    stop("timeout",
         where + ": scenario '" + out.id + "' took longer than --timeout " + fmt_g(options.timeout) + " s to compare",
         check);
  };
  try {
    const ScopedDeadline deadline(options.timeout);
    probe_module().attr("set_deadline")(options.timeout);
    compare_files(gold, candidate, g, c, options, out);
  } catch (const TimeLimitExceeded& e) {
    timed_out(e.what());
  } catch (const UnsafeFileError& e) {  // a pickle that is a FIFO or a symbolic link
    stop("error", std::string("cannot read a file of the results: ") + e.what());
  } catch (const std::system_error& e) {
    stop("error", std::string("cannot read a file of the results: ") + e.what());
  } catch (const std::bad_alloc&) {
    stop("error", "out of memory while comparing scenario '" + out.id + "' (" + (gold.dir / g.file).string() + ", " +
                      (candidate.dir / c.file).string() + "); lower --max-result-memory to refuse such files");
  } catch (py::error_already_set& e) {
    if (!out_of_time_or_memory(e)) throw;
    // The probes' or the asserter's time limit: its message says which (an asserter that hangs is its check's).
    if (!e.matches(PyExc_MemoryError))
      return timed_out(py::str(e.value()).cast<std::string>(),
                       e.matches(py::module_::import("parity.asserters").attr("TimedOut")) ? "assert_eq" : "error");
    stop("error", "out of memory while comparing scenario '" + out.id + "' (Python: " + e.what() + ")");
  }
}

// The verdict when at least one side did not produce outputs to compare.
bool decide_without_outputs(const ScenarioRecord* g, const ScenarioRecord* c, const Manifest& gold,
                            const Manifest& candidate, ScenarioOutcome& out) {
  if (!g || !c) {
    const std::string side = g ? "candidate" : "gold";
    out.status = "fail";
    out.checks.push_back({"missing", false, "outputs",
                          "scenario '" + out.id + "' is absent from the " + side + " results (" +
                              (g ? candidate : gold).dir.string() + ")"});
    return true;
  }
  for (const auto& [side, r] : {std::pair{"gold", g}, std::pair{"candidate", c}}) {
    if (r->status == "skip")
      return out.status = "skip", out.message = side + std::string(": ") + r->error.value("message", ""), true;
  }
  for (const auto& [side, r] : {std::pair{"gold", g}, std::pair{"candidate", c}}) {
    if (r->status == "xpass") return out.status = "xpass", out.message = r->error.value("message", ""), true;
  }
  bool errored = false;
  for (const auto& [side, r] : {std::pair{"gold", g}, std::pair{"candidate", c}}) {
    if (r->status != "error" && r->status != "crash" && r->status != "timeout") continue;
    errored = true;
    // An output the codec could not carry is a `serialize` failure; anything else the scenario raised is `error`.
    const char* check = r->error.value("type", "") == "SerializeError" ? "serialize" : "error";
    out.checks.push_back({check, false, side, error_text(side, *r), r->error});
  }
  if (errored)
    return out.status = "error",
           out.message = out.checks.front().message.substr(0, out.checks.front().message.find('\n')), true;
  for (const auto& [side, r] : {std::pair{"gold", g}, std::pair{"candidate", c}}) {
    if (r->status == "xfail")
      return out.status = "xfail",
             out.message = std::string(side) + " expected failure: " + r->error.value("reason", ""), true;
  }
  return false;
}

std::set<std::string> failed_checks(const ScenarioOutcome& out) {
  std::set<std::string> names;
  for (const Check& c : out.checks)
    if (!c.ok) names.insert(c.check);
  return names;
}

std::string joined(const std::set<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The compare xfail, strict. A reason string covers the whole pass. A {check: reason} dict covers those checks:
// their failures are expected (marked so in their details), any other failure still fails the scenario, and an
// expected check that passed is an xpass.
void decide_compare_xfail(ScenarioOutcome& out) {
  const json xfail = out.meta.value("xfail", json::object());
  if (!xfail.contains("compare") || (out.status != "pass" && out.status != "fail")) return;
  const json& spec = xfail.at("compare");
  if (spec.is_string()) {
    const std::string reason = spec.get<std::string>();
    if (out.status == "fail")
      out.status = "xfail", out.message = "compare expected failure: " + reason;
    else
      out.status = "xpass", out.message = "the compare pass was expected to fail (" + reason + ") but passed";
    return;
  }
  std::set<std::string> unexpected = failed_checks(out), passed_expected;
  for (const auto& [check, reason] : spec.items()) {
    if (!unexpected.erase(check)) passed_expected.insert(check + " (" + reason.get<std::string>() + ")");
    for (Check& c : out.checks)
      if (!c.ok && c.check == check) c.details["xfail"] = reason;
  }
  if (!unexpected.empty()) {
    out.status = "fail", out.message = "failed checks: " + joined(unexpected);
  } else if (!passed_expected.empty()) {
    out.status = "xpass", out.message = "checks expected to fail passed: " + joined(passed_expected);
  } else {
    out.status = "xfail", out.message = "expected check failures: " + joined(failed_checks(out));
  }
}

// Strict unless the record says `xfail_strict: false` (a pytest suite's xfail_strict setting): then an xpass is a
// pass whose message says what was expected, as pytest's non-strict XPASS.
void apply_compare_xfail(ScenarioOutcome& out) {
  decide_compare_xfail(out);
  if (out.status == "xpass" && !out.meta.value("xfail_strict", true))
    out.status = "pass", out.message = "XPASS (xfail_strict is false): " + out.message;
}

// A mistyped field in either side's record (record_check.h) is this scenario's error naming the manifest, the
// scenario and the field; nothing else of the scenario is compared. Returns whether there was one.
bool add_malformed_checks(const Manifest& gold, const Manifest& candidate, const ScenarioRecord* g,
                          const ScenarioRecord* c, ScenarioOutcome& out) {
  for (const auto& [side, manifest, record] : {std::tuple{"gold", &gold, g}, std::tuple{"candidate", &candidate, c}}) {
    if (!record) continue;
    const std::string field = malformed_field(*record);
    if (field.empty()) continue;
    const std::string file = (manifest->dir / kManifestName).string();
    out.checks.push_back({"error",
                          false,
                          side,
                          "malformed record: " + file + ": scenario '" + out.id + "': " + field,
                          {{"malformed", {{"file", file}, {"problem", field}}}}});
  }
  return !out.checks.empty();
}

}  // namespace

void record_checks(CheckList list, ScenarioOutcome& out) {
  out.status = list.failures.empty() ? "pass" : "fail";
  out.coverage = list.coverage;
  out.checks = std::move(list.failures);
  out.skipped = std::move(list.skipped);
  for (const auto& [check, n] : list.passed) out.checks.push_back({check, true, "outputs", "", {{"leaves", n}}});
}

std::string summary_message(const ScenarioOutcome& out) {
  const std::string names = joined(failed_checks(out));
  return names.empty() ? names : "failed checks: " + names;
}

ScenarioOutcome compare_scenario(const Manifest& gold, const Manifest& candidate, const ScenarioRecord* g,
                                 const ScenarioRecord* c, const std::string& id, const CompareOptions& options,
                                 const std::vector<Difference>& differences) {
  const auto start = std::chrono::steady_clock::now();
  ScenarioOutcome out;
  out.id = id;
  const bool malformed = add_malformed_checks(gold, candidate, g, c, out);
  // A malformed record's meta is not read at all: the scenario is shown without its declaration.
  out.meta = malformed ? json::object() : g ? g->meta : c->meta;
  // The compare xfail (and its strictness) is the candidate run's: parity.xfail_on scopes an xfail to the backend that
  // earns it, so only the candidate's manifest holds it (gold's resolved it for gold).
  if (!malformed && g && c)
    for (const char* key : {"xfail", "xfail_strict"})
      if (c->meta.contains(key)) out.meta[key] = c->meta.at(key);
  out.gold_seconds = g ? g->seconds : 0;
  out.candidate_seconds = c ? c->seconds : 0;
  out.repro = repro_command(options, gold, candidate, id, out.meta);
  if (malformed) {
    out.status = "error", out.message = out.checks.front().message;
  } else if (!decide_without_outputs(g, c, gold, candidate, out)) {
    compare_files_within_limits(gold, candidate, *g, *c, options, out);
  }
  apply_compare_xfail(out);
  if (!malformed) apply_differences(differences, out);  // the manifest that declares them is the one in doubt
  if (out.message.empty()) out.message = summary_message(out);
  out.compare_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace parity
