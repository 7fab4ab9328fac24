// The Python probes compare runs on the outputs rebuilt as Python objects: fidelity, pickle, attrs, assert_eq.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "codec.h"
#include "compare.h"
#include "manifest.h"
#include "pybind11_fwd.h"

namespace parity {

// Imports the trusted scenario directory holding the scenario's module, for the reducers it registers (parity.trust),
// when a rebuild failed for want of a reducer or type (parity.reducers.RebuildError, which the codec's message
// carries). Returns why it is not trusted, "" when it is imported or the failure is of another kind.
std::string load_scenario_reducers(const FormatError& e, const nlohmann::json& meta, const CompareOptions& options);

// The outputs rebuilt as Python objects, for the checks that need them (the probes, assert_eq): rebuilt at most once
// per scenario, when the first of them asks. A reducer the scenario's own module registers is loaded only when the
// rebuild needs it, from a trusted directory.
class Rebuilt {
 public:
  Rebuilt(const Node& gold, const Node& candidate, const nlohmann::json& meta, const CompareOptions& options)
      : gold_node_(gold), candidate_node_(candidate), meta_(meta), options_(options) {}
  const pybind11::object& gold() { return rebuild().gold_; }
  const pybind11::object& candidate() { return rebuild().candidate_; }
  /// The codec's message when the outputs cannot be rebuilt, "" when they are.
  const std::string& error() { return rebuild().error_; }
  /// Why the scenario's directory is not trusted, when its reducers were needed ("" otherwise).
  const std::string& scenarios_why() { return rebuild().scenarios_why_; }

 private:
  Rebuilt& rebuild() {
    if (done_) return *this;
    done_ = true;
    // Each failed rebuild imports the next of the trusted code that may register what it lacks (the scenario's own
    // module, then the rest of its directory: parity.trust), and the rebuild is tried again.
    for (int imports = 0;; ++imports) {
      try {
        gold_ = to_python(gold_node_);
        candidate_ = to_python(candidate_node_);
        return *this;
      } catch (const FormatError& e) {
        scenarios_why_ = load_scenario_reducers(e, meta_, options_);
        if (imports < 2 && scenarios_why_.empty()) continue;
        error_ = e.what();
        return *this;
      }
    }
  }
  const Node &gold_node_, &candidate_node_;
  const nlohmann::json& meta_;
  const CompareOptions& options_;
  bool done_ = false;
  pybind11::object gold_, candidate_;
  std::string error_, scenarios_why_;
};

/// The fidelity digests of a scenario's rebuilt outputs, begun before the values walk so that the values kernel
/// hashes the large arrays' bytes as it compares them (`taps`, for compare_outputs); run_probes finishes them.
struct BegunDigests {
  /// One side's: parity.probe.begin_digests' job (digests, arrays, pending leaves) and the arrays a pickle may
  /// reference (parity.probe.digests' `arrays`).
  struct Side {
    pybind11::object job;
    pybind11::dict arrays;
  };
  std::optional<Side> gold, candidate;  ///< for each side whose run recorded digests
  DigestTaps taps;
};

/// What compare keeps of both sides' result files as read_result read them (ResultBytes), taken before any Python code
/// runs on the outputs rebuilt over that memory (a reducer may write to a writeable array there): the pickle probe then
/// reads neither file again.
struct StoredResults {
  /// One side's: its file's size and, when its record has a pickle_offset within the file, the bytes from there to the
  /// end (checked only when the probe reads them: read_pickle).
  struct Side {
    std::uint64_t size = 0;
    std::optional<std::string> pickle;
  };
  Side gold, candidate;
  /// Both sides wrote the same result file byte for byte (each at most kSameResultBytes): the pickle probe's short
  /// path.
  bool same_bytes = false;
};

/// StoredResults of a scenario's two result files; `pickle_probe` false keeps only their sizes.
StoredResults stored_results(const ScenarioRecord& g, const ScenarioRecord& c, const ResultBytes& gold,
                             const ResultBytes& candidate, bool pickle_probe);

/// Begins the fidelity digests of the sides whose runs recorded them, when their outputs rebuild (else begins none).
BegunDigests begin_digests(const ScenarioRecord& g, const ScenarioRecord& c, Rebuilt& rebuilt);

/// The probes a scenario's records and the candidate backend call for: fidelity (each side's reloaded outputs
/// digest as written: `begun`, finished here), REQUIRED_ATTRS, pickle; a side compare does not trust gets them
/// skipped, saying why.
void run_probes(const Manifest& gold, const Manifest& candidate, const ScenarioRecord& g, const ScenarioRecord& c,
                const StoredResults& stored, Rebuilt& rebuilt, const BegunDigests& begun, const CompareOptions& options,
                CheckList& list);

/// assert_eq: the asserter a pytest test's mark names, called on both rebuilt outputs (parity.asserters).
void check_assert_eq(const std::string& id, const nlohmann::json& meta, Rebuilt& rebuilt, const CompareOptions& options,
                     CheckList& list);

/// A Python error that is no bug: the probes' time limit (parity.probe.DeadlineExceeded), or MemoryError.
bool out_of_time_or_memory(pybind11::error_already_set& e);

/// The module parity.probe, imported once per process: compare calls into it several times a scenario, a run's worker
/// at every scenario (worker.cc's record_probes), and each import statement looks the module up again (sys.modules,
/// its spec's `_initializing`).
pybind11::module_ probe_module();

/// Loads side `side`'s backend for its reducers when it is built-in or trusted; returns why not, "" when loaded.
std::string load_reducers(const Manifest& m, const std::string& side, const std::vector<std::string>& trusted);
/// The same for `recorded`, a manifest's `backend` object (or the {spec, role} its run will record: warm_compare).
std::string load_reducers(const nlohmann::json& recorded, const std::string& side,
                          const std::vector<std::string>& trusted);

}  // namespace parity
