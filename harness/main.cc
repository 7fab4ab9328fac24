// The parity command line: list, run and compare (see README.md, "Command line").
#include <pybind11/embed.h>

#include <CLI/CLI.hpp>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "atomic_file.h"
#include "compare.h"
#include "config.h"
#include "interpreter.h"
#include "json_report.h"
#include "junit.h"
#include "manifest.h"
#include "progress.h"
#include "runner.h"

namespace parity {
namespace {

std::string self_path(const char* argv0) {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? argv0 : exe.string();
}

void add_selection(CLI::App* cmd, Selection& selection) {
  cmd->add_option("--scenarios", selection.paths,
                  "scenario file or directory (repeatable; default: the bundled scenarios/)");
  cmd->add_option("--only", selection.only, "run only the scenario with this exact id (repeatable)");
  cmd->add_option("-k,--keyword", selection.keyword, "run only scenarios whose id contains this text");
}

// -q and -v, for run and compare alike; giving both is a usage error.
void add_verbosity(CLI::App* cmd, Verbosity& verbosity) {
  auto* quiet = cmd->add_flag_callback(
      "-q,--quiet", [&verbosity] { verbosity = Verbosity::kQuiet; },
      "print only failing scenarios, one line each, and a one-line summary");
  cmd->add_flag_callback(
         "-v,--verbose", [&verbosity] { verbosity = Verbosity::kVerbose; },
         "print every scenario with all its details (tracebacks, the checks that passed)")
      ->excludes(quiet);
}

struct CompareArgs {
  std::string gold, candidate, json_file, junit_file;
  CompareOptions options;
  Verbosity verbosity = Verbosity::kNormal;
};

// Writes the reports asked for, adding each to `written` once it is on disk; throws std::runtime_error.
void write_reports(const CompareArgs& args, const CompareReport& report, std::vector<WrittenReport>& written) {
  if (!args.json_file.empty()) {
    write_file_atomically(args.json_file,
                          report_to_json(report).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    written.push_back({"JSON report", args.json_file});
  }
  if (!args.junit_file.empty()) {
    write_file_atomically(args.junit_file, report_to_junit(report));
    written.push_back({"JUnit report", args.junit_file});
  }
}

int compare_command(CompareArgs& args, const std::string& program) {
  Manifest gold, candidate;
  try {
    gold = read_manifest(args.gold);
    candidate = read_manifest(args.candidate);
  } catch (const ManifestError& e) {
    std::fprintf(stderr, "parity compare: %s\n", e.what());
    return kExitUsage;
  }
  start_interpreter();
  std::fprintf(stderr, "parity %s | compare %s %s (%s) vs %s %s (%s)\n", PARITY_VERSION,
               gold.backend.value("name", "?").c_str(), gold.backend.value("version", "?").c_str(), args.gold.c_str(),
               candidate.backend.value("name", "?").c_str(), candidate.backend.value("version", "?").c_str(),
               args.candidate.c_str());
  args.options.program = program;
  const std::size_t total = compared_ids(gold, candidate, args.options.only).size();
  Progress progress(stderr, progress_options(stderr, "compare", total, args.verbosity));
  args.options.on_start = [&progress](const std::string& id, std::size_t, std::size_t) { progress.begin(id); };
  args.options.on_outcome = [&progress](const ScenarioOutcome& s) { progress.end(to_shown(s)); };
  CompareReport report = compare_runs(gold, candidate, args.options);
  report.started = utc_timestamp();
  std::vector<WrittenReport> written;
  try {
    write_reports(args, report, written);
  } catch (const std::runtime_error& e) {
    progress.summary(written);
    std::fprintf(stderr, "parity compare: cannot write the report: %s\n", e.what());
    return kExitUsage;
  }
  progress.summary(written);
  return report.failed() ? kExitFailed : kExitOk;
}

int main_impl(int argc, char** argv) {
  CLI::App app{"parity: does a proxy-array library behave like NumPy, after its results have travelled?"};
  app.require_subcommand(1);
  app.set_version_flag("--version", PARITY_VERSION);

  Selection list_selection;
  bool list_json = false;
  auto* list = app.add_subcommand("list", "list scenario ids (imports scenario modules, never a backend)");
  add_selection(list, list_selection);
  list->add_flag("--json", list_json, "print ids with their declarations as JSON");

  RunOptions run_options;
  auto* run = app.add_subcommand("run", "run scenarios under one backend and write a results directory");
  run->add_option("--backend", run_options.backend,
                  "built-in name (gold, fsproxy, ...), dotted module path or .py file; default: $PARITY_BACKEND");
  run->add_option("--role", run_options.role, "gold or candidate (default: gold for the gold backend)")
      ->check(CLI::IsMember({"gold", "candidate"}));
  run->add_option("--out", run_options.out, "results directory to write")->required();
  add_verbosity(run, run_options.verbosity);
  run->add_flag("!--no-pickle-probe", run_options.pickle_probe,
                "do not store the outputs pickled for the pickle check");
  add_selection(run, run_options.selection);

  CompareArgs compare_args;
  auto* compare = app.add_subcommand("compare", "compare a gold and a candidate results directory");
  compare->add_option("gold", compare_args.gold, "gold results directory")->required();
  compare->add_option("candidate", compare_args.candidate, "candidate results directory")->required();
  compare->add_option("--json", compare_args.json_file, "write the JSON report here");
  compare->add_option("--junit", compare_args.junit_file, "write the JUnit XML report here");
  add_verbosity(compare, compare_args.verbosity);
  compare->add_option("--only", compare_args.options.only, "compare only the scenario with this exact id (repeatable)");
  compare->add_flag("!--no-pickle-probe", compare_args.options.pickle_probe,
                    "do not unpickle stored pickles (unpickling runs code: use it for results from elsewhere)");
  // The run's policies; a scenario's own policy= overrides them (README, "Policies").
  PolicyChoice& policy = compare_args.options.policy;
  compare->add_option("--dtype-policy", policy.dtype, "dtype check: exact (default), native-order-ok or kind")
      ->check(CLI::IsMember(PolicyChoice::values("dtype")));
  compare
      ->add_option("--layout-policy", policy.layout,
                   "layout checks: contiguity (default), strides (also exact strides) or ignore")
      ->check(CLI::IsMember(PolicyChoice::values("layout")));
  compare->add_option("--type-policy", policy.type, "type check: exact-or-mapped (default), subclass-ok or ignore")
      ->check(CLI::IsMember(PolicyChoice::values("type")));

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  for (Selection* s : {&list_selection, &run_options.selection})
    if (s->paths.empty()) s->paths.push_back(PARITY_SCENARIOS);
  if (*list) return list_scenarios(list_selection, list_json);
  if (*run) return run_scenarios(run_options);
  return compare_command(compare_args, self_path(argv[0]));
}

}  // namespace
}  // namespace parity

int main(int argc, char** argv) {
  try {
    return parity::main_impl(argc, argv);
  } catch (const pybind11::error_already_set& e) {
    std::fprintf(stderr, "parity: internal error (Python): %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parity: %s\n", e.what());
  }
  return parity::kExitUsage;
}
