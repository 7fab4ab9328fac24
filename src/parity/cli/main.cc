// The parity command line: list, run, compare, report and merge (see README.md, "Command line").
#include <pybind11/embed.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include "atomic_file.h"
#include "compare.h"
#include "config.h"
#include "html_report.h"
#include "interpreter.h"
#include "json_report.h"
#include "junit.h"
#include "manifest.h"
#include "merge.h"
#include "progress.h"
#include "resources.h"
#include "runner.h"
#include "text.h"
#include "trends.h"
#include "worker.h"

namespace parity {
namespace {

constexpr auto kReplace = nlohmann::json::error_handler_t::replace;  // a damaged file's bad UTF-8 is shown, not thrown

std::string self_path(const char* argv0) {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? argv0 : exe.string();
}

void add_selection(CLI::App* cmd, Selection& selection) {
  cmd->add_option("--scenarios", selection.paths,
                  "scenario file or directory (repeatable; default: the bundled scenarios/)");
  cmd->add_option("--only", selection.only, "run only the scenario with this exact id (repeatable)");
  cmd->add_option("-k,--keyword", selection.keyword,
                  "run only scenarios matching this pytest keyword expression (\"fft and not real\"; a word matches "
                  "a case-insensitive substring of an id, module, function, tag or name=value param); a selection "
                  "of nothing exits 5");
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

// --shard and --shard-times, for run and compare alike (shard.h); GTEST_TOTAL_SHARDS/GTEST_SHARD_INDEX stand in.
void add_sharding(CLI::App* cmd, ShardArgs& args) {
  cmd->add_option("--shard", args.shard,
                  "only shard I of N (1-based, e.g. 2/3; default: GTEST_SHARD_INDEX+1 of GTEST_TOTAL_SHARDS when set)");
  cmd->add_option("--shard-times", args.times,
                  "balance the shards by the scenario times of an earlier results directory, manifest or compare JSON");
}

// Where the reports go; an empty path is a report not asked for.
struct ReportPaths {
  std::string json, junit, html;
};

// Writes every report asked for from the one JSON document, so each report shows the same facts; adds each to
// `written` once it is on disk (a failure later still lists the ones before it). Throws std::runtime_error.
void write_reports(const nlohmann::json& report, const ReportPaths& paths, std::vector<WrittenReport>& written) {
  auto write = [&](const char* label, const std::string& path, auto render) {
    if (path.empty()) return;
    write_file_atomically(path, render());
    written.push_back({label, path});
  };
  write("JSON report", paths.json,
        [&] { return report.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"; });
  write("JUnit report", paths.junit, [&] { return report_to_junit(report); });
  write("HTML report", paths.html, [&] { return report_to_html(report); });
}

// --baseline, for compare and report alike: earlier compare JSONs the failures are marked against (trends.h).
void add_baselines(CLI::App* cmd, std::vector<std::string>& files) {
  cmd->add_option("--baseline", files,
                  "an earlier compare JSON of the same candidate backend (repeatable; ordered by when each started): "
                  "marks failures new, still failing or fixed")
      // One file per --baseline: a vector option would otherwise swallow the positional arguments after it (merge's
      // shard reports).
      ->allow_extra_args(false);
}

struct CompareArgs {
  std::string gold, candidate;
  std::optional<double> timeout;
  ReportPaths reports;
  std::vector<std::string> baselines;
  CompareOptions options;
  Verbosity verbosity = Verbosity::kNormal;
  ShardArgs sharding;
};

// A declaration that explained nothing: the library changed (remove it), or this run did not include what it is for.
void print_stale_differences(const CompareReport& report) {
  const std::vector<std::string> stale = report.stale_differences();
  if (stale.empty()) return;
  std::string ids;
  for (const std::string& id : stale) ids += (ids.empty() ? "" : ", ") + printable(id);
  std::fprintf(
      stderr, "parity compare: %s: %zu declared difference%s explained no failure in this run: %s%s\n",
      report.strict_differences ? "failed" : "note", stale.size(), stale.size() == 1 ? "" : "s", ids.c_str(),
      report.strict_differences ? " (the library no longer differs there: remove them from its DIFFERENCES)" : "");
}

// Checks skipped because they would trust the results directory: always shown, -q or not (README, "Safety").
void print_notices(const nlohmann::json& document) {
  for (const nlohmann::json& notice : document.value("notices", nlohmann::json::array()))
    print_line("compare", "notice: " + notice.value("message", ""));
}

// "pandas 2.2.3, scipy 1.14.1": the libraries a run imported (its manifest's environment.libraries).
std::string libraries_text(const Manifest& m) {
  const auto found = m.environment.find("libraries");
  if (found == m.environment.end() || !found->is_object() || found->empty()) return "none recorded";
  std::string text;
  for (const auto& [name, version] : found->items())
    text +=
        (text.empty() ? "" : ", ") + name + " " + (version.is_string() ? version.get<std::string>() : version.dump());
  return text;
}

// Under the banner: the library versions both runs used, so that an install that changed one is seen at once.
void print_libraries(const Manifest& gold, const Manifest& candidate) {
  const std::string g = libraries_text(gold), c = libraries_text(candidate);
  if (g == c && g == "none recorded") return;
  print_line("compare", "libraries: gold " + g + (g == c ? " (the same for the candidate)" : "; candidate " + c));
}

// Two results directories that cannot be meant as this pair: given the wrong way round, or runs of different
// scenario sets (nothing in common to compare). Empty when the pair is usable.
std::string pairing_mistake(const Manifest& gold, const Manifest& candidate, const std::vector<std::string>& only) {
  const std::string g = gold.dir.string(), c = candidate.dir.string();
  if (gold.backend.value("role", "") == "candidate" && candidate.backend.value("role", "") == "gold")
    return g + " is a candidate run and " + c +
           " a gold run: they are swapped; give the gold run first: parity compare " + c + " " + g;
  if (gold.scenarios.empty() || candidate.scenarios.empty() || !compared_ids(gold, candidate, only).size()) return "";
  std::set<std::string> in_gold;
  for (const ScenarioRecord& r : gold.scenarios) in_gold.insert(r.id);
  for (const ScenarioRecord& r : candidate.scenarios)
    if (in_gold.count(r.id)) return "";
  return g + " and " + c + " have no scenario in common: they ran different scenario sets (gold: " +
         gold.run.value("paths", nlohmann::json::array()).dump(-1, ' ', false, kReplace) +
         ", candidate: " + candidate.run.value("paths", nlohmann::json::array()).dump(-1, ' ', false, kReplace) +
         "); run both over the same --scenarios";
}

// A compare of nothing passes nothing: two empty runs (that failed before their first scenario) or an --only that
// names no scenario of either are a mistake to report, never a green result; so is one --only id that neither run
// has, a typo as it is for `run --only` (an id in one run only is that scenario's `missing` failure). Empty when
// there is something and every id is known.
std::string nothing_compared(const Manifest& gold, const Manifest& candidate, const std::vector<std::string>& only) {
  const std::string both = gold.dir.string() + " and " + candidate.dir.string();
  if (compared_ids(gold, candidate, only).empty())
    return "the compare covered 0 scenarios: " +
           (only.empty() ? both + " list none (did their runs stop before the first scenario?)"
                         : "no scenario of " + both + " has an id given with --only");
  const std::vector<std::string> all = compared_ids(gold, candidate, {});
  const std::set<std::string> known(all.begin(), all.end());
  for (const std::string& id : only)
    if (!known.count(id)) return "no scenario of " + both + " has the id '" + id + "' given with --only";
  return "";
}

// The per-scenario time limit the runs had (run.timeout): the longer of the two, 0 (none) if either had none,
// RunOptions' default for manifests written before parity recorded it.
double recorded_timeout(const Manifest& gold, const Manifest& candidate) {
  double longest = 0;
  for (const Manifest* m : {&gold, &candidate}) {
    const auto it = m->run.find("timeout");
    const double t = it != m->run.end() && it->is_number() ? it->get<double>() : RunOptions().timeout;
    if (!(t > 0) || !std::isfinite(t)) return 0;
    longest = std::max(longest, t);
  }
  return longest;
}

int compare_command(CompareArgs& args, const std::string& program) {
  Manifest gold, candidate;
  try {
    gold = read_manifest(args.gold);
    candidate = read_manifest(args.candidate);
  } catch (const ManifestError& e) {
    print_line("compare", e.what());
    return kExitUsage;
  }
  if (const std::string nothing = nothing_compared(gold, candidate, args.options.only); !nothing.empty()) {
    print_line("compare", nothing);
    return kExitUsage;
  }
  try {  // the shard's ids: those of an unsharded compare's partition, or the partition the runs recorded
    args.options.shard = compare_shard_plan(gold, candidate, resolve_shard_request(args.sharding),
                                            compared_ids(gold, candidate, args.options.only));
  } catch (const ShardError& e) {
    print_line("compare", e.what());
    return kExitUsage;
  }
  if (const std::string mistake = pairing_mistake(gold, candidate, args.options.only); !mistake.empty()) {
    print_line("compare", mistake);
    return kExitUsage;
  }
  std::vector<Baseline> baselines;
  try {  // before comparing anything: a baseline that cannot serve is a usage error, found in a moment
    baselines = read_baselines(args.baselines, candidate.backend.value("name", ""), utc_timestamp());
  } catch (const ReportJsonError& e) {
    print_line("compare", e.what());
    return kExitUsage;
  }
  start_interpreter();
  const auto side = [](const Manifest& m, const std::string& dir) {
    return printable(m.backend.value("name", "?") + " " + m.backend.value("version", "?") + " (" + dir + ")");
  };
  std::fprintf(stderr, "parity %s | compare %s vs %s\n", PARITY_VERSION, side(gold, args.gold).c_str(),
               side(candidate, args.candidate).c_str());
  print_libraries(gold, candidate);
  args.options.program = program;
  args.options.timeout = args.timeout ? *args.timeout : recorded_timeout(gold, candidate);
  const std::size_t total = ids_to_compare(gold, candidate, args.options).size();
  Progress progress(stderr, progress_options(stderr, "compare", total, args.verbosity));
  args.options.on_start = [&progress](const std::string& id, std::size_t, std::size_t) { progress.begin(id); };
  args.options.on_outcome = [&progress](const ScenarioOutcome& s) { progress.end(to_shown(s)); };
  const std::string started = utc_timestamp();
  CompareReport report;
  try {
    report = compare_runs(gold, candidate, args.options);
  } catch (const DifferenceError& e) {
    print_line("compare", e.what());
    return kExitUsage;
  }
  report.started = started;
  nlohmann::json document = report_to_json(report);
  add_trends(document, std::move(baselines));
  std::vector<WrittenReport> written;
  try {
    // Every writer reads this JSON, so a report re-rendered later from the JSON file says what this one says.
    write_reports(document, args.reports, written);
  } catch (const std::runtime_error& e) {
    progress.summary(written);
    print_line("compare", std::string("cannot write the report: ") + e.what());
    return kExitUsage;
  }
  progress.summary(written);
  if (const std::string trends = trend_summary_text(document, args.verbosity == Verbosity::kQuiet); !trends.empty())
    std::fprintf(stderr, "parity compare: %s", trends.c_str());
  print_stale_differences(report);
  print_notices(document);
  return report.failed() ? kExitFailed : kExitOk;
}

struct ReportArgs {
  std::string input;
  ReportPaths reports;
  std::vector<std::string> baselines;
};

// `parity report`: renders HTML and JUnit again from a compare JSON, without the results directories.
int report_command(const ReportArgs& args) {
  if (args.reports.html.empty() && args.reports.junit.empty()) {
    std::fprintf(stderr, "parity report: nothing to write: give --html FILE and/or --junit FILE\n");
    return kExitUsage;
  }
  std::vector<WrittenReport> written;
  try {
    nlohmann::json report = read_report_json(args.input);
    add_trends(report, read_baselines(args.baselines, report.value("/candidate/backend/name"_json_pointer, ""),
                                      report.value("started", "")));
    if (!args.reports.html.empty()) start_interpreter();
    write_reports(report, args.reports, written);
  } catch (const ReportJsonError& e) {
    print_line("report", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {  // a field of the wrong type (nlohmann), an unwritable file, a template error
    print_line("report", args.input + ": " + e.what());
    return kExitUsage;
  }
  for (const WrittenReport& w : written) print_line("report", "wrote " + w.label + " " + w.path);
  return kExitOk;
}

struct MergeArgs {
  std::vector<std::string> inputs;
  std::string out;
  ReportPaths reports;
  std::vector<std::string> baselines;
};

// `parity merge`: shard compare JSONs into one report (--json/--junit/--html), or shard results directories into
// one (--out); merge.h does the work.
int merge_command(const MergeArgs& args, const std::string& program) {
  const bool reports = !args.reports.json.empty() || !args.reports.junit.empty() || !args.reports.html.empty();
  if (reports == !args.out.empty()) {
    std::fprintf(stderr,
                 "parity merge: give either --out DIR (to merge shard results directories) or --json, "
                 "--junit and/or --html (to merge shard compare JSONs)\n");
    return kExitUsage;
  }
  if (!reports && !args.baselines.empty()) {
    std::fprintf(stderr,
                 "parity merge: --baseline marks a merged report's failures: give it with --json/--junit/--html\n");
    return kExitUsage;
  }
  if (!reports) return merge_results_command(args.inputs, args.out, program);
  // The nightly job's final report is a merge: the trends against last night's go into it as compare puts them.
  return merge_reports_command(args.inputs, program, [&args](const nlohmann::json& merged) {
    nlohmann::json report = merged;
    add_trends(report, read_baselines(args.baselines, report.value("/candidate/backend/name"_json_pointer, ""),
                                      report.value("started", "")));
    if (!args.reports.html.empty()) start_interpreter();
    std::vector<WrittenReport> written;
    write_reports(report, args.reports, written);
    for (const WrittenReport& w : written) print_line("merge", "wrote " + w.label + " " + w.path);
    if (const std::string trends = trend_summary_text(report, false); !trends.empty())
      std::fprintf(stderr, "parity merge: %s", trends.c_str());
  });
}

int main_impl(int argc, char** argv) {
  CLI::App app{"parity: does a proxy-array library behave like NumPy, after its results have travelled?"};
  app.require_subcommand(1);
  app.set_version_flag("--version", PARITY_VERSION);
  app.footer(
      "Exit codes: 0 nothing failed; 1 something failed; 2 usage or infrastructure error; 5 the selection holds no "
      "scenario (pytest's \"no tests collected\"); 130 interrupted.");

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
  run->add_option("-j,--jobs", run_options.jobs, "worker processes running scenarios at once (default 1)")
      ->check(CLI::PositiveNumber);
  run->add_option("--timeout", run_options.timeout,
                  "seconds a scenario may run before its worker is stopped (a scenario's timeout= wins; 0: none)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  run->add_flag("--resume", run_options.resume,
                "finish an interrupted run into --out: keep the scenarios its manifest lists, run the rest");
  run->add_option("--max-memory", run_options.max_memory_mb,
                  "megabytes of resident memory a worker may use before it is stopped (default: no limit)");
  add_sharding(run, run_options.sharding);

  // The worker processes `run` starts (worker.h); not for people, hence no group in --help.
  WorkerOptions worker_options;
  auto* worker = app.add_subcommand("_worker", "")->group("");
  worker->add_option("--backend", worker_options.backend)->required();
  worker->add_option("--role", worker_options.role);
  worker->add_option("--out", worker_options.out)->required();
  worker->add_flag("!--no-pickle-probe", worker_options.pickle_probe);
  worker->add_option("--crashed-module", worker_options.crashed_modules);
  add_selection(worker, worker_options.selection);

  CompareArgs compare_args;
  auto* compare = app.add_subcommand("compare", "compare a gold and a candidate results directory");
  compare->add_option("gold", compare_args.gold, "gold results directory")->required();
  compare->add_option("candidate", compare_args.candidate, "candidate results directory")->required();
  compare->add_option("--json", compare_args.reports.json, "write the JSON report here");
  compare->add_option("--junit", compare_args.reports.junit, "write the JUnit XML report here");
  compare->add_option("--html", compare_args.reports.html, "write the HTML report here (one self-contained file)");
  add_verbosity(compare, compare_args.verbosity);
  add_baselines(compare, compare_args.baselines);
  compare->add_option("--only", compare_args.options.only, "compare only the scenario with this exact id (repeatable)");
  compare->add_flag("!--no-pickle-probe", compare_args.options.pickle_probe,
                    "do not unpickle stored pickles (without it, only pickles whose MAC verifies with your key "
                    "are unpickled)");
  compare
      ->add_option("--scenarios", compare_args.options.trusted_scenarios,
                   "a scenario directory whose modules compare may import for the reducers they register, when "
                   "outputs need them (repeatable; PARITY_TRUST_SCENARIOS adds more); the bundled corpus is trusted")
      ->check(CLI::ExistingPath);  // a misspelt directory would otherwise trust nothing, silently
  compare->add_option("--trust-backend", compare_args.options.trusted_backends,
                      "a backend (name, module or .py path) compare may import for its reducers, for runs that "
                      "recorded it (repeatable; PARITY_TRUST_BACKENDS adds more); built-ins are always trusted");
  compare->add_flag("--strict-differences", compare_args.options.strict_differences,
                    "fail when a difference the candidate declares explains nothing (for whole-corpus runs)");
  // The run's policies; a scenario's own policy= overrides them (README, "Policies").
  PolicyChoice& policy = compare_args.options.policy;
  for (const PolicySpec& spec : policy_specs()) {
    std::string help = std::string(spec.help) + ":";
    for (const std::string& v : spec.values) help += " " + v + (&v == &spec.values.front() ? " (default)," : ",");
    help.pop_back();
    compare->add_option("--" + std::string(spec.name) + "-policy", policy.*spec.member, help)
        ->check(CLI::IsMember(spec.values));
  }
  compare
      ->add_option("--timeout", compare_args.timeout,
                   "seconds one scenario's compare may take before it is recorded as timeout and the next one "
                   "compared (default: the runs' own --timeout, as their manifests record it; 0: none)")
      ->check(CLI::NonNegativeNumber);
  compare
      ->add_option("--max-result-memory", compare_args.options.limits.max_memory,
                   "bytes of memory one result file may expand to when read (copies of its values); a file "
                   "past it is that scenario's error")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_sharding(compare, compare_args.sharding);

  MergeArgs merge_args;
  auto* merge = app.add_subcommand("merge", "merge shard compare JSONs into one report, or shard results directories");
  merge->add_option("inputs", merge_args.inputs, "the shards' compare JSONs, or with --out their results directories")
      ->required();
  merge->add_option("--out", merge_args.out, "merge results directories into this new results directory");
  merge->add_option("--json", merge_args.reports.json, "write the merged JSON report here");
  merge->add_option("--junit", merge_args.reports.junit, "write the merged JUnit XML report here");
  merge->add_option("--html", merge_args.reports.html, "write the merged HTML report here");
  add_baselines(merge, merge_args.baselines);

  ReportArgs report_args;
  auto* report = app.add_subcommand("report", "render the HTML and JUnit reports again from a compare JSON");
  report->add_option("report", report_args.input, "the JSON that 'parity compare --json' wrote")->required();
  report->add_option("--html", report_args.reports.html, "write the HTML report here");
  report->add_option("--junit", report_args.reports.junit, "write the JUnit XML report here");
  add_baselines(report, report_args.baselines);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  for (const PolicySpec& spec : policy_specs())  // what was given wins over the candidate backend's POLICY
    if (compare->get_option("--" + std::string(spec.name) + "-policy")->count() > 0)
      compare_args.options.policies_given.insert(spec.name);
  for (Selection* s : {&list_selection, &run_options.selection})
    if (s->paths.empty()) s->paths.push_back(resources().scenarios);
  if (*list) return list_scenarios(list_selection, list_json);
  run_options.program = self_path(argv[0]);
  if (*run) return run_scenarios(run_options);
  if (*worker) return worker_main(worker_options);
  if (*report) return report_command(report_args);
  if (*merge) return merge_command(merge_args, self_path(argv[0]));
  return compare_command(compare_args, self_path(argv[0]));
}

}  // namespace
}  // namespace parity

int main(int argc, char** argv) {
  try {
    return parity::main_impl(argc, argv);
  } catch (const pybind11::error_already_set& e) {
    std::fprintf(stderr, "parity: internal error (Python): %s\n",
                 parity::printable(e.what(), parity::Newlines::kKeep).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parity: %s\n", parity::printable(e.what(), parity::Newlines::kKeep).c_str());
  }
  return parity::kExitUsage;
}
