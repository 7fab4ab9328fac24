// The Python probes: fidelity (digests of the reloaded outputs), pickle, the backend's REQUIRED_ATTRS, assert_eq.
#include "probes.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "compare_internal.h"
#include "messages.h"
#include "resources.h"
#include "safe_file.h"

namespace py = pybind11;
using json = nlohmann::json;

namespace parity {
namespace {

// One side of a scenario, for the probes: its record, what compare kept of its result file, and its outputs rebuilt as
// Python objects.
struct Side {
  std::string name;
  const Manifest& manifest;
  const ScenarioRecord& record;
  const StoredResults::Side& stored;
  py::object outputs;
  py::dict arrays;  // the outputs' arrays and whole digests (parity.probe.digests), which the pickle references
};

// What a fidelity failure says changed at one path: both values when the run recorded the written one's short
// description (fidelity_values) and it differs from the reloaded one's, else the two digests.
std::string fidelity_change(const json& written_value, const std::string& reloaded_value, const std::string& written,
                            const std::string& reloaded) {
  const std::string digests = "digest " + written + ", reloaded " + reloaded;
  if (!written_value.is_string()) return digests;
  const std::string was = written_value.get<std::string>();
  if (reloaded_value.empty() || was == reloaded_value) return was + "; " + digests;
  return "written " + was + ", reloaded " + reloaded_value;
}

// A digest a run recorded, for parity.probe.begin_digests to find the algorithm it digested with (its prefix; none:
// SHA-256, what parity recorded before XXH3-128), so that results of either are checked with their own; None for none.
py::object recorded_digest(const json& fidelity) {
  const auto first = fidelity.begin();
  return first == fidelity.end() || !first->is_string() ? py::object(py::none()) : py::str(first->get<std::string>());
}

// The sides' outputs digested again as the run digested them, the digests begun before the values walk finished
// (parity.probe.finish_digests: what the values kernel did not hash, large results on two threads): [(side,
// recomputed)] for the sides whose run recorded digests. The nodes' short descriptions are made only for a side whose
// digests differ (check_fidelity): most scenarios pass, and describing costs more than hashing.
std::vector<std::pair<const Side*, py::dict>> recompute_digests(const Side& gold, const Side& cand,
                                                                const BegunDigests& begun) {
  std::vector<std::pair<const Side*, py::dict>> found;
  py::list jobs;
  std::uintmax_t nbytes = 0;
  for (const auto& [side, begun_side] : {std::pair{&gold, &begun.gold}, std::pair{&cand, &begun.candidate}}) {
    if (!*begun_side) continue;
    found.emplace_back(side, py::dict());
    jobs.append((*begun_side)->job);
    // Only a side with leaves still to hash may take a thread, so only its file's size is asked for.
    if (py::len((*begun_side)->job[py::int_(2)]) > 0) nbytes += side->stored.size;
  }
  if (found.empty()) return found;
  const py::list recomputed = probe_module().attr("finish_digests")(jobs, nbytes);
  for (std::size_t i = 0; i < found.size(); ++i) found[i].second = recomputed[i];
  return found;
}

// fidelity: the reloaded outputs must digest exactly as the scenario's outputs did before writing. An object with a
// reducer digests part by part at its state's paths, so a failure names the part its rebuild changed.
void check_fidelity(const Side& side, const py::dict& recomputed, CheckList& list) {
  const json& values = side.record.fidelity_values.is_object() ? side.record.fidelity_values : json::object();
  std::size_t failures = 0;
  py::dict shown;  // the reloaded nodes' short descriptions, made at the first failure
  for (const auto& [path, digest] : side.record.fidelity.items()) {
    const py::str key(path);
    const std::string now = recomputed.contains(key) ? recomputed[key].cast<std::string>() : "absent";
    if (now == digest.get<std::string>()) continue;
    if (failures++ == 0) shown = probe_module().attr("descriptions")(side.outputs);
    const std::string reloaded_value = shown.contains(key) ? shown[key].cast<std::string>() : "";
    const json written_value = values.value(path, json());
    json details = {{"side", side.name}, {"written", digest}, {"reloaded", now}};
    if (written_value.is_string()) details["written_value"] = written_value;
    if (!reloaded_value.empty()) details["reloaded_value"] = reloaded_value;
    list.failures.push_back(
        {"fidelity", false, path,
         "the " + side.name + " output reloaded from " + (side.manifest.dir / side.record.file).string() +
             " differs here from what the scenario produced (" +
             fidelity_change(written_value, reloaded_value, digest.get<std::string>(), now) +
             "): parity's codec, or the backend's reducer for this type, changed it; please report this file",
         std::move(details)});
  }
  if (failures == 0) list.pass("fidelity");
}

// Result files up to this size are compared whole to learn whether both sides wrote the same bytes; larger ones never
// take the short path (comparing them would cost what unpickling referenced buffers saves).
constexpr std::uint64_t kSameResultBytes = 4u << 20;

StoredResults::Side stored_side(const ScenarioRecord& r, const ResultBytes& bytes, bool pickle_probe) {
  StoredResults::Side side{bytes.size, std::nullopt};
  if (pickle_probe && r.pickle_offset && *r.pickle_offset <= bytes.size)
    side.pickle.emplace(bytes.view().substr(static_cast<std::size_t>(*r.pickle_offset)));
  return side;
}

bool has_pickle(const ScenarioRecord& r) { return r.pickle_offset || !r.pickle_file.empty(); }

// Whether both sides' pickles verify with the user's key; a side whose does not gets the probe skipped, saying why.
// `g`, `c`: parity.probe.verify_both's (prepared, why not, why not whole) of each side.
bool pickles_verified(const Side& gold, py::handle g, const Side& cand, py::handle c, CheckList& list) {
  bool verified = true;
  for (const auto& [side, t] : {std::pair{&gold, g}, std::pair{&cand, c}}) {
    const py::object why = t[py::int_(1)];
    if (why.is_none()) continue;
    verified = false;
    list.skipped.push_back(
        {"pickle", side == &gold ? "gold" : "candidate", "unverified-pickle", why.cast<std::string>()});
  }
  return verified;
}

// pickle, from the runs' records alone (no output rebuilt): the candidate's outputs refused to be pickled where
// gold's did not. Returns whether that is so.
bool pickle_refused(const ScenarioRecord& g, const ScenarioRecord& c, const std::string& gold_name,
                    const std::string& cand_name, CheckList& list) {
  const json &gerr = g.pickle_error, &cerr = c.pickle_error;
  if (!cerr.is_object() || gerr.is_object()) return false;
  list.failures.push_back({"pickle", false, cerr.value("path", "outputs"),
                           "pickle (protocol 5) cannot pickle the " + cand_name + " output: " + error_summary(cerr) +
                               "; " + gold_name + "'s output pickles",
                           cerr});
  return true;
}

// A result file whose end is not a whole pickle (cut short, added to) is the scenario's error, as a damaged file is
// (compare_files_within_limits), not a pickle that merely fails to verify: this error, saying `why`.
std::system_error damaged_pickle(const Side& side, const std::string& why) {
  return std::system_error(std::make_error_code(std::errc::invalid_argument),
                           (side.manifest.dir / side.record.file).string() + ": the pickle from byte " +
                               std::to_string(side.record.pickle_offset.value_or(0)) +
                               " (its record's pickle_offset) " + why);
}

// A side's pickle: from pickle_offset to the end of its result file (as stored_results kept it), or (manifest version
// 1) its own file. The first must also be whole (parity.probe.verify_both's `whole`, throw_if_not_whole).
std::string read_pickle(const Side& side) {
  const ScenarioRecord& r = side.record;
  if (!r.pickle_offset) return read_regular_file(side.manifest.dir, r.pickle_file);
  if (!side.stored.pickle)
    throw damaged_pickle(side, "is past the end of the file (" + std::to_string(side.stored.size) + " bytes)");
  return *side.stored.pickle;
}

// `why`: why `side`'s pickle, the end of its result file, is not whole (parity.probe.whole_pickle_error), or None.
void throw_if_not_whole(const Side& side, const py::object& why) {
  if (!why.is_none())
    throw damaged_pickle(side, "is not whole: " + why.cast<std::string>() + " (the file was cut short or changed)");
}

// The candidate's pickle (read_pickle), once gold's is read: where the candidate's cannot be read (past its file's end,
// a missing file), gold's error comes first when gold's pickle is not whole, as each side's whole check came before the
// next side was read (verify_both now checks both, on the path where both are read).
std::string read_pickle_after(const Side& cand, const Side& gold, const std::string& gold_pickle,
                              const py::module_& probe) {
  try {
    return read_pickle(cand);
  } catch (...) {
    if (gold.record.pickle_offset)
      throw_if_not_whole(
          gold, probe.attr("whole_pickle_error")(py::memoryview::from_memory(gold_pickle.data(), gold_pickle.size())));
    throw;
  }
}

// No pickle verdict: gold's own pickle (NumPy's) raised `gold_error` when unpickled, so what a faithful pickle keeps
// of these outputs is unknown, and the candidate's pickle, which `what` (raised, or loses something), cannot be judged
// against it. Neither a pass nor a failure: a skipped check (outcome.h), so that the report says why the check is
// missing. The reason names the error's type only: notices group the scenarios whose reasons are the same.
void unjudged_pickle(const Side& gold, py::handle gold_error, const Side& cand, const std::string& what,
                     CheckList& list) {
  const std::string type = from_py(gold_error).value("type", "?");
  list.skipped.push_back({"pickle", "gold", "unjudged-pickle",
                          "unpickling the " + gold.name + " outputs raised " + type +
                              ": with nothing known of what a faithful pickle keeps of them, the " + cand.name +
                              " pickle, which " + what + ", cannot be judged"});
}

// pickle: what the candidate's own pickling loses, judged against what plain NumPy (gold) loses too.
// `same_bytes`: both sides wrote the same result file (StoredResults).
void check_pickle(const Side& gold, const Side& cand, bool same_bytes, CheckList& list) {
  if (pickle_refused(gold.record, cand.record, gold.name, cand.name, list)) return;
  if (!has_pickle(gold.record) || !has_pickle(cand.record)) return;
  const py::module_ probe = probe_module();
  const std::string gold_pickle = read_pickle(gold), cand_pickle = read_pickle_after(cand, gold, gold_pickle, probe);
  const bool gold_whole = gold.record.pickle_offset.has_value(), cand_whole = cand.record.pickle_offset.has_value();
  // The same result file and the same pickle, byte for byte (the MACs too: one key): this process rebuilds both sides'
  // outputs alike and unpickles both pickles alike, so whatever the candidate's pickle loses (or raises) gold's loses
  // (or raises) at the same paths, nothing NumPy's pickle keeps. The verdict, then, without unpickling either: gold's
  // verified (and checked whole, for either side: the same bytes), the candidate's not again.
  if (same_bytes && gold_pickle == cand_pickle) {
    const py::tuple both =
        probe.attr("verify_both")(py::bytes(gold_pickle), gold.outputs, gold.arrays, py::none(), py::none(), py::none(),
                                  py::make_tuple(gold_whole || cand_whole, false));
    const py::tuple verified = both[0];
    throw_if_not_whole(gold_whole ? gold : cand, verified[2]);
    if (verified[1].is_none()) return list.pass("pickle");
    for (const char* side : {"gold", "candidate"})  // the same bytes: refused alike, for the same reason
      list.skipped.push_back({"pickle", side, "unverified-pickle", verified[1].cast<std::string>()});
    return;
  }
  // Both checked whole and verified in one call, the user's key looked up once for the two, nothing unpickled.
  const py::tuple both =
      probe.attr("verify_both")(py::bytes(gold_pickle), gold.outputs, gold.arrays, py::bytes(cand_pickle), cand.outputs,
                                cand.arrays, py::make_tuple(gold_whole, cand_whole));
  throw_if_not_whole(gold, both[0][py::int_(2)]);
  throw_if_not_whole(cand, both[1][py::int_(2)]);
  if (!pickles_verified(gold, both[0], cand, both[1], list)) return;
  // The candidate's pickle first, gold's only once the verdict needs it: what gold's raises or loses only excuses what
  // the candidate's does, so a candidate that unpickles and loses nothing passes without it (most scenarios: one
  // unpickling fewer a scenario, issue #20's target 2).
  const py::object unpickle = probe.attr("unpickle_prepared");
  const py::tuple c = unpickle(both[1][py::int_(0)]);
  std::optional<py::tuple> gold_unpickled;
  const auto g = [&]() -> const py::tuple& {
    if (!gold_unpickled) gold_unpickled = unpickle(both[0][py::int_(0)]);
    return *gold_unpickled;
  };
  if (!c[1].is_none()) {
    // Both raise: no verdict, which could hide a loss behind the candidate's error; the skip says so.
    if (!g()[1].is_none()) return unjudged_pickle(gold, g()[1], cand, "raised too", list);
    json err = from_py(c[1]);
    return list.failures.push_back(
        {"pickle", false, "outputs",
         "unpickling the " + cand.name + " outputs raised " + error_summary(err) + "\n" + err.value("traceback", ""),
         err});
  }
  const py::object losses = probe.attr("losses");
  const py::list cand_losses = losses(cand.outputs, c[0]);
  if (cand_losses.empty()) return list.pass("pickle");  // gold's losses only excuse the candidate's
  if (!g()[1].is_none()) return unjudged_pickle(gold, g()[1], cand, "loses something", list);
  std::set<std::pair<std::string, std::string>> gold_losses;
  for (py::handle l : losses(gold.outputs, g()[0]))
    gold_losses.emplace(l["path"].cast<std::string>(), l["aspect"].cast<std::string>());
  std::size_t failures = 0;
  for (py::handle l : cand_losses) {
    const auto path = l["path"].cast<std::string>(), aspect = l["aspect"].cast<std::string>();
    if (gold_losses.count({path, aspect})) continue;  // plain NumPy loses it too: not the candidate's fault
    ++failures;
    const auto faithful = l["faithful"].cast<std::string>(), unpickled = l["unpickled"].cast<std::string>();
    list.failures.push_back({"pickle",
                             false,
                             path,
                             "pickle (protocol 5) round trip of the " + cand.name + " output loses its " + aspect +
                                 ": " + faithful + " before, " + unpickled + " after; " + gold.name + " keeps it",
                             {{"aspect", aspect}, {"faithful", faithful}, {"unpickled", unpickled}}});
  }
  if (failures == 0) list.pass("pickle");
}

// attrs, for TYPE_MAP proxies: the attributes the candidate backend declares required (REQUIRED_ATTRS) must exist
// on its outputs rebuilt here, in a process that never ran the scenario (cuDF's lost `_fsproxy_wrapped`).
void check_required_attrs(const Side& cand, const json& required, CheckList& list) {
  if (!required.is_object() || required.empty()) return;
  py::object missing = probe_module().attr("missing_attributes")(cand.outputs, to_py(required));
  std::size_t failures = 0;
  for (py::handle m : missing) {
    ++failures;
    const auto path = m["path"].cast<std::string>(), type = m["type"].cast<std::string>(),
               attribute = m["attribute"].cast<std::string>();
    list.failures.push_back({"attrs",
                             false,
                             path,
                             "the " + cand.name + " output (" + type + ") has no attribute '" + attribute +
                                 "' after the reload, though the backend declares it required (REQUIRED_ATTRS)",
                             {{"type", type}, {"attribute", attribute}, {"required", true}}});
  }
  if (failures == 0) list.pass("attrs");
}

// The probes that would have run, recorded as skipped for each side compare does not trust (side -> why), as `kind`.
void skip_probes(bool digests, bool pickles, bool attrs, const std::map<std::string, std::string>& untrusted,
                 const std::string& kind, CheckList& list) {
  for (const auto& [side, reason] : untrusted) {
    for (const auto& [check, would_run] :
         {std::pair{"fidelity", digests}, std::pair{"attrs", attrs}, std::pair{"pickle", pickles}})
      if (would_run) list.skipped.push_back({check, side, kind, reason});
  }
}

// A failure parity.asserters describes ({criterion, message, details}) as an assert_eq check.
void fail_assert_eq(py::handle failure, CheckList& list) {
  list.failures.push_back(
      {"assert_eq", false, "outputs", failure["message"].cast<std::string>(), from_py(failure["details"])});
}

}  // namespace

// Imports the trusted scenario directory holding the scenario's module, for the reducers it registers (parity.trust),
// when a rebuild failed for want of a reducer or type (parity.reducers.RebuildError, which the codec's message
// carries). Returns why it is not trusted, "" when it is imported or the failure is of another kind.
std::string load_scenario_reducers(const FormatError& e, const json& meta, const CompareOptions& options) {
  const std::string_view what = e.what();
  if (what.find("no reducer named") == std::string_view::npos && what.find("is not rebuilt") == std::string_view::npos)
    return "";
  return py::module_::import("parity.trust")
      .attr("load_scenario_reducers")(to_py(meta), py::cast(options.trusted_scenarios), resources().scenarios)
      .cast<std::optional<std::string>>()
      .value_or("");
}

BegunDigests begin_digests(const ScenarioRecord& g, const ScenarioRecord& c, Rebuilt& rebuilt) {
  BegunDigests begun;
  if (!g.fidelity.is_object() && !c.fidelity.is_object()) return begun;
  if (!rebuilt.error().empty()) return begun;  // run_probes says why not
  const py::module_ probe = probe_module();
  py::list sides;
  std::vector<BegunDigests::Side*> order;
  for (const auto& [record, outputs, side] :
       {std::tuple{&g, rebuilt.gold(), &begun.gold}, std::tuple{&c, rebuilt.candidate(), &begun.candidate}}) {
    if (!record->fidelity.is_object()) continue;
    side->emplace();
    order.push_back(&**side);
    sides.append(py::make_tuple(outputs, py::none(), (*side)->arrays, recorded_digest(record->fidelity)));
  }
  const py::tuple started = probe.attr("begin_digests")(sides);
  const py::list jobs = started[0];
  for (std::size_t i = 0; i < order.size(); ++i) order[i]->job = jobs[i];
  for (py::handle tap : started[1]) begun.taps.add(tap[py::int_(0)], tap[py::int_(1)]);
  return begun;
}

StoredResults stored_results(const ScenarioRecord& g, const ScenarioRecord& c, const ResultBytes& gold,
                             const ResultBytes& candidate, bool pickle_probe) {
  StoredResults out{stored_side(g, gold, pickle_probe), stored_side(c, candidate, pickle_probe)};
  if (!pickle_probe || gold.size == 0 || gold.size > kSameResultBytes || candidate.size != gold.size) return out;
  // Different pickles at their ends: the files differ, learnt without comparing them whole.
  if (out.gold.pickle && out.candidate.pickle && *out.gold.pickle != *out.candidate.pickle) return out;
  out.same_bytes = gold.view() == candidate.view();
  return out;
}

void run_probes(const Manifest& gold, const Manifest& candidate, const ScenarioRecord& g, const ScenarioRecord& c,
                const StoredResults& stored, Rebuilt& rebuilt, const BegunDigests& begun, const CompareOptions& options,
                CheckList& list) {
  const bool digests = g.fidelity.is_object() || c.fidelity.is_object();
  const bool pickles = options.pickle_probe && (c.pickle_error.is_object() || has_pickle(c));
  const json required = candidate.backend.value("required_attrs", json::object());
  if (!digests && !pickles && required.empty()) return;  // nothing to rebuild the outputs for
  if (!rebuilt.error().empty()) {
    const std::string& scenarios_why = rebuilt.scenarios_why();
    if (options.untrusted.empty() && scenarios_why.empty())
      return list.failures.push_back(
          {"fidelity", false, "outputs", "cannot rebuild the outputs to check them: " + rebuilt.error()});
    // Reducers of an untrusted backend or scenario module were never loaded: its own types cannot be rebuilt, and
    // that is no failure. A pickling error the run recorded needs no rebuilt output: it is still judged.
    const bool refused = pickles && pickle_refused(g, c, gold.backend.value("name", "gold"),
                                                   candidate.backend.value("name", "candidate"), list);
    skip_probes(digests, pickles && !refused, !required.empty(), options.untrusted, "untrusted-backend", list);
    if (scenarios_why.empty()) return;
    skip_probes(digests, false, false, {{"gold", scenarios_why}}, "untrusted-scenarios", list);
    return skip_probes(digests, pickles && !refused, !required.empty(), {{"candidate", scenarios_why}},
                       "untrusted-scenarios", list);
  }
  const auto arrays = [](const std::optional<BegunDigests::Side>& side) { return side ? side->arrays : py::dict(); };
  const Side gs{gold.backend.value("name", "gold"), gold, g, stored.gold, rebuilt.gold(), arrays(begun.gold)},
      cs{candidate.backend.value("name", "candidate"),
         candidate,
         c,
         stored.candidate,
         rebuilt.candidate(),
         arrays(begun.candidate)};
  for (const auto& [side, recomputed] : recompute_digests(gs, cs, begun)) check_fidelity(*side, recomputed, list);
  check_required_attrs(cs, required, list);
  if (options.pickle_probe) check_pickle(gs, cs, stored.same_bytes, list);
}

// assert_eq: the asserter a pytest test's mark names (its run records the name), read from the test in a trusted
// suite and called on both outputs as rebuilt here (parity.asserters). Any reason it cannot run fails the check.
void check_assert_eq(const std::string& id, const json& meta, Rebuilt& rebuilt, const CompareOptions& options,
                     CheckList& list) {
  if (meta.value("kind", "") != "pytest" || !meta.contains("assert_eq") || !meta.at("assert_eq").is_string()) return;
  py::module_ asserters = py::module_::import("parity.asserters");
  const py::tuple found =
      asserters.attr("find")(to_py(meta), id, py::cast(options.trusted_scenarios), resources().scenarios);
  if (!found[2].is_none()) return fail_assert_eq(found[2], list);
  if (!rebuilt.error().empty()) {
    std::string why = rebuilt.scenarios_why().empty() ? rebuilt.error() : rebuilt.scenarios_why();
    for (const auto& [side, reason] : options.untrusted) why += "; " + reason;
    return list.failures.push_back({"assert_eq",
                                    false,
                                    "outputs",
                                    "the asserter " + found[1].cast<std::string>() +
                                        " was not run: the outputs cannot be rebuilt to call it with: " + why,
                                    {{"criterion", found[1].cast<std::string>()}}});
  }
  const py::object failure = asserters.attr("call")(found[0], found[1], rebuilt.gold(), rebuilt.candidate());
  if (!failure.is_none()) return fail_assert_eq(failure, list);
  list.pass("assert_eq");
}

py::module_ probe_module() {
  // Set under the GIL, which every caller holds (no static guard: a thread waiting on one while holding the GIL
  // would deadlock an import that lets the GIL go). Its reference is never released: the interpreter outlives every
  // caller, and a static's destructor could run after it finalized.
  static PyObject* probe = nullptr;
  if (!probe) probe = py::module_::import("parity.probe").release().ptr();
  return py::reinterpret_borrow<py::module_>(probe);
}

// A Python error that is no bug: the probes' time limit (parity.probe.DeadlineExceeded), or MemoryError.
bool out_of_time_or_memory(py::error_already_set& e) {
  return e.matches(PyExc_MemoryError) || e.matches(probe_module().attr("DeadlineExceeded"));
}

// The probes rebuild outputs through the backends' reducers, which are registered when their modules load: those
// of a built-in backend, or of one the user trusts (parity.trust). Returns why they are not loaded, "" if they are.
std::string load_reducers(const Manifest& m, const std::string& side, const std::vector<std::string>& trusted) {
  return load_reducers(m.backend, side, trusted);
}

std::string load_reducers(const json& recorded, const std::string& side, const std::vector<std::string>& trusted) {
  try {
    py::object why =
        py::module_::import("parity.trust").attr("load_reducers")(to_py(recorded), side, py::cast(trusted));
    return why.is_none() ? "" : why.cast<std::string>();
  } catch (py::error_already_set& e) {
    return "the " + side + " run's backend cannot be loaded for its reducers: " + e.what();
  }
}

}  // namespace parity
