// The repro command a failure carries: re-runs one scenario on both backends and compares it.
#include "repro.h"

#include "compare.h"
#include "compare_internal.h"
#include "text.h"

namespace py = pybind11;
using json = nlohmann::json;

namespace parity {

std::string run_command(const std::string& program, const json& backend) {
  std::vector<std::string> words = {program, "run", "--backend", backend.value("spec", "gold")};
  const std::string role = backend.value("role", "");
  if (!role.empty() && role != (backend.value("name", "") == "gold" ? "gold" : "candidate"))
    words.insert(words.end(), {"--role", role});
  return shell_join(words);
}

std::string policy_flags(const PolicyChoice& policy, const std::set<std::string>& given) {
  std::vector<std::string> words;
  for (const PolicySpec& spec : policy_specs())
    if (run_chose(policy, given, spec))
      words.insert(words.end(), {"--" + std::string(spec.name) + "-policy", policy.*spec.member});
  return words.empty() ? "" : " " + shell_join(words);
}

std::string repro_command(const CompareOptions& options, const Manifest& gold, const Manifest& candidate,
                          const std::string& id, const json& meta) {
  const std::string& program = options.program;
  // A pytest scenario's id is relative to the scenario path its run was given (its "root"), not to its file's folder.
  const std::string source = meta.value("root", meta.value("source", ""));
  auto run = [&](const Manifest& m, const char* dir) {
    std::vector<std::string> words;
    if (!source.empty()) words = {"--scenarios", source};
    words.insert(words.end(), {"--only", id, "--out", dir});
    return run_command(program, m.backend) + " " + shell_join(words);
  };
  // The compare trusts what this one was told to trust, so that the repro runs the same probes.
  std::vector<std::string> compare_words = {program, "compare", "/tmp/parity-repro/gold",
                                            "/tmp/parity-repro/candidate"};
  for (const std::string& spec : options.trusted_backends)
    compare_words.insert(compare_words.end(), {"--trust-backend", spec});
  for (const std::string& dir : options.trusted_scenarios)
    compare_words.insert(compare_words.end(), {"--scenarios", dir});
  // ';' rather than '&&': a side whose run fails (exit 1) must not stop the other side or the compare.
  const std::string compare = shell_join(compare_words) + policy_flags(options.policy, options.policies_given);
  return run(gold, "/tmp/parity-repro/gold") + " ; " + run(candidate, "/tmp/parity-repro/candidate") + " ; " + compare;
}

}  // namespace parity
