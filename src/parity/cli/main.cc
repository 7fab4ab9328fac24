// The parity command line: list, run, coverage, shrink, compare, check, report and merge (see README.md, "Command
// line"). error_already_set and Python.h (PyOS_AfterFork_Child, PyRun_SimpleString): pytypes.h, not embed.h, whose
// pybind11.h costs a file ~9 CPU s to compile (CMakeLists.txt, parity_layer).
#include <pybind11/pytypes.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>

#include "check.h"
#include "compare.h"
#include "compare_results.h"
#include "config.h"
#include "config_file.h"
#include "coverage.h"
#include "deadline.h"
#include "exit_keep.h"
#include "json_report.h"
#include "manifest.h"
#include "merge.h"
#include "progress.h"
#include "protocol.h"
#include "report_files.h"
#include "resources.h"
#include "runner.h"
#include "shrink.h"
#include "text.h"
#include "trends.h"
#include "worker.h"

namespace parity {
namespace {

// A number option's check: CLI11's PositiveNumber and NonNegativeNumber let "nan" through (a NaN timeout was no
// timeout) and refuse 0 with "Value 0 not in range 0.000000 to 1797..." (309 digits), which says it is in range.
CLI::Validator finite_number(bool positive) {
  return CLI::Validator(
      [positive](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size()) return "'" + text + "' is not a number";
        if (!std::isfinite(value)) return "'" + text + "' is not a finite number";
        if (positive ? value <= 0 : value < 0) return "'" + text + "' must be " + (positive ? "above 0" : "0 or more");
        return "";
      },
      positive ? "POSITIVE" : "NONNEGATIVE");
}
const CLI::Validator kPositive = finite_number(true), kNonNegative = finite_number(false);

// A path option's check: an empty value (an unset variable: --json "$REPORT") was taken for no report (nothing
// written, exit 0), --scenarios '' for the current directory (every module under it imported), --out '' for an
// internal error.
const CLI::Validator kPath(
    [](std::string& text) { return text.empty() ? std::string("an empty path (an unset variable?)") : std::string(); },
    "");

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

// --baseline, for compare and report alike: earlier compare JSONs the failures are marked against (trends.h).
void add_baselines(CLI::App* cmd, std::vector<std::string>& files) {
  cmd->add_option("--baseline", files,
                  "an earlier compare JSON of the same candidate backend (repeatable; ordered by when each started): "
                  "marks failures new, still failing or fixed")
      // One file per --baseline: a vector option would otherwise swallow the positional arguments after it (merge's
      // shard reports).
      ->allow_extra_args(false);
}

// compare's arguments: the command (compare_results.h) and its reports (report_files.h).
struct CompareArgs : CompareCommand {
  ReportPaths reports;
  std::vector<std::string> baselines;
};

// Whether the reports asked for can be written (report_paths_problem, `created` as there); where not, says why as
// `verb`.
bool reports_can_be_written(const char* verb, const ReportPaths& paths, const std::vector<std::string>& inputs,
                            const std::string& created = "") {
  const std::string problem = report_paths_problem(paths, inputs, created);
  if (!problem.empty()) print_line(verb, problem);
  return problem.empty();
}

// A command line's compare, `compare` (compare_results, or check_scenarios ending `parity check`, `verb`) given the
// writer of `args`' reports, once their destinations can take them (a check found a missing directory only after both
// runs): what it leaves (both manifests and the report: process_ends_after; the reports' document, here) is kept to
// the process's end (keep_until_exit) instead of freed one allocation at a time, which at thousands of scenarios took
// tens of milliseconds after the last report was written. `results`: the two results directories, which no report
// may be, nor their manifests (`--json gold/manifest.json` had overwritten one; a check's `--json OUT/gold` had failed
// after both runs); `created`: the directory a check makes (its --out).
template <class Compare>
int compare_until_exit(const char* verb, CompareArgs& args, Compare&& compare,
                       const std::array<std::filesystem::path, 2>& results, const std::string& created = "") {
  std::vector<std::string> inputs = args.baselines;
  for (const std::filesystem::path& dir : results) {
    inputs.push_back(dir.string());
    inputs.push_back((dir / kManifestName).string());
  }
  if (!reports_can_be_written(verb, args.reports, inputs, created)) return kExitUsage;
  args.process_ends_after = true;
  auto reports = std::make_shared<CompareReportWriter>(args.reports, args.baselines);
  const int code = compare(*reports);
  keep_until_exit(std::move(reports));
  return code;
}

int compare_command(CompareArgs& args, const std::string& program) {
  args.options.program = program;
  return compare_until_exit("compare", args,
                            [&args](CompareReporter& reports) { return compare_results(args, reports); },
                            {args.gold, args.candidate});
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
  std::vector<std::string> inputs = args.baselines;
  inputs.push_back(args.input);
  if (!reports_can_be_written("report", args.reports, inputs)) return kExitUsage;
  try {
    nlohmann::json report = read_report_json(args.input);
    write_reports_with_trends(report, args.reports, args.baselines, "report");
  } catch (const ReportJsonError& e) {
    print_line("report", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {  // a field of the wrong type (nlohmann), an unwritable file, a template error
    print_line("report", args.input + ": " + e.what());
    return kExitUsage;
  }
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
  std::vector<std::string> inputs = args.inputs;
  inputs.insert(inputs.end(), args.baselines.begin(), args.baselines.end());
  if (!reports_can_be_written("merge", args.reports, inputs)) return kExitUsage;
  // The nightly job's final report is a merge: the trends against last night's go into it as compare puts them.
  return merge_reports_command(args.inputs, program, [&args](const nlohmann::json& merged) {
    nlohmann::json report = merged;
    write_reports_with_trends(report, args.reports, args.baselines, "merge");
    if (const std::string trends = trend_summary_text(report, false); !trends.empty())
      std::fprintf(stderr, "parity merge: %s", trends.c_str());
  });
}

// One subcommand: its options, defined on the app, and what runs it once they are parsed.
struct Subcommand {
  CLI::App* command;
  std::function<int()> run;
};

struct ListArgs {
  Selection selection;
  bool json = false;
};

Subcommand define_list(CLI::App& app) {
  auto args = std::make_shared<ListArgs>();
  Selection& list_selection = args->selection;
  bool& list_json = args->json;
  auto* list = app.add_subcommand("list", "list scenario ids (imports scenario modules, never a backend)");
  add_selection(list, list_selection);
  list->add_flag("--json", list_json, "print ids with their declarations as JSON");
  return {list, [args] {
            if (args->selection.paths.empty()) args->selection.paths.push_back(resources().scenarios);
            return list_scenarios(args->selection, args->json);
          }};
}

// The options `run` and `check` share: what runs, how, and what each scenario stores.
void add_run_flags(CLI::App* cmd, RunOptions& options) {
  cmd->add_flag("!--no-pickle-probe", options.pickle_probe, "do not store the outputs pickled for the pickle check");
  add_selection(cmd, options.selection);
  cmd->add_option("-j,--jobs", options.jobs, "worker processes running scenarios at once (default 1)")
      ->check(kPositive);
  cmd->add_option("--timeout", options.timeout,
                  "seconds a scenario may run before its worker is stopped (a scenario's timeout= wins; 0: none)")
      ->capture_default_str()
      ->check(kNonNegative);
  cmd->add_option("--max-memory", options.max_memory_mb,
                  "megabytes of resident memory a worker may use before it is stopped (default: no limit)");
  add_sharding(cmd, options.sharding);
}

Subcommand define_run(CLI::App& app, const std::string& program) {
  auto args = std::make_shared<RunOptions>();
  RunOptions& run_options = *args;
  auto* run = app.add_subcommand("run", "run scenarios under one backend and write a results directory");
  run->add_option("--backend", run_options.backend,
                  "built-in name (gold, fsproxy, ...), dotted module path or .py file; default: $PARITY_BACKEND");
  run->add_option("--role", run_options.role, "gold or candidate (default: gold for the gold backend)")
      ->check(CLI::IsMember({"gold", "candidate"}));
  run->add_option("--out", run_options.out, "results directory to write")->required();
  add_verbosity(run, run_options.verbosity);
  add_run_flags(run, run_options);
  run->add_flag("--resume", run_options.resume,
                "finish an interrupted run into --out: keep the scenarios its manifest lists, run the rest");
  return {run, [args, program] {
            if (args->selection.paths.empty()) args->selection.paths.push_back(resources().scenarios);
            args->program = program;
            return run_scenarios(*args);
          }};
}

Subcommand define_coverage(CLI::App& app, const std::string& program) {
  auto args = std::make_shared<CoverageOptions>();
  CoverageOptions& coverage_options = *args;
  auto* coverage = app.add_subcommand(
      "coverage", "which of NumPy's public callables the selected scenarios call (measured during a gold run)");
  add_selection(coverage, coverage_options.run.selection);
  coverage->add_option("--json", coverage_options.json,
                       "write the coverage JSON here (percent, per namespace, callables with their scenarios)");
  coverage->add_option("-j,--jobs", coverage_options.run.jobs, "worker processes running scenarios at once (default 1)")
      ->check(kPositive);
  coverage->add_option("--timeout", coverage_options.run.timeout, "seconds a scenario may run (0: none)")
      ->capture_default_str()
      ->check(kNonNegative);
  return {coverage, [args, program] {
            if (!reports_can_be_written("coverage", ReportPaths{args->json, "", ""}, {})) return int{kExitUsage};
            if (args->run.selection.paths.empty()) args->run.selection.paths.push_back(resources().scenarios);
            args->run.program = program;
            args->run.verbosity = Verbosity::kQuiet;  // the coverage summary is the output
            return coverage_command(*args);
          }};
}

Subcommand define_shrink(CLI::App& app, const std::string& program) {
  auto args = std::make_shared<ShrinkOptions>();
  ShrinkOptions& shrink_options = *args;
  auto* shrink = app.add_subcommand(
      "shrink",
      "find the smallest input of a generated scenario that still fails the same check at the same place, "
      "and write it as a scenario module with its repro command");
  shrink->add_option("id", shrink_options.id, "the failing scenario (ops.<name>[layout=...,dtype=...])")->required();
  shrink->add_option("--backend", shrink_options.backend, "the candidate backend it fails under")
      ->envname("PARITY_BACKEND");
  shrink->add_option("--out", shrink_options.out, "the scenario module to write (default: shrunk_<function>.py here)");
  shrink
      ->add_option("--scenarios", shrink_options.scenarios,
                   "scenario file or directory the id is in (repeatable; default: the bundled scenarios/)")
      ->allow_extra_args(false);  // one path per --scenarios: the id may follow it
  shrink
      ->add_option("--max-examples", shrink_options.max_examples,
                   "cases to run at most (each: gold, candidate, compare)")
      ->capture_default_str()
      ->check(kPositive);
  shrink->add_option("--timeout", shrink_options.timeout, "seconds each side's run of a case may take (0: none)")
      ->capture_default_str()
      ->check(kNonNegative);
  shrink->add_option("--check", shrink_options.check, "the failed check to keep (default: the scenario's first)");
  shrink
      ->add_option("--trust-backend", shrink_options.trusted_backends,
                   "passed to compare: a backend it may import for its reducers (repeatable)")
      ->allow_extra_args(false);
  return {shrink, [args, program] {
            args->program = program;
            return shrink_command(*args);
          }};
}

// The worker processes `run` starts (worker.h), their flags protocol.h's; not for people, hence no group in --help.
Subcommand define_worker(CLI::App& app) {
  auto args = std::make_shared<WorkerOptions>();
  WorkerOptions& worker_options = *args;
  namespace flag = protocol::flag;
  auto* worker = app.add_subcommand(protocol::kWorkerCommand, "")->group("");
  worker->add_option(flag::kBackend, worker_options.backend)->required();
  worker->add_option(flag::kRole, worker_options.role);
  worker->add_option(flag::kOut, worker_options.out)->required();
  worker->add_flag(std::string("!") + flag::kNoPickleProbe, worker_options.pickle_probe);
  worker->add_option(flag::kCrashedModule, worker_options.crashed_modules);
  worker->add_option(flag::kPart, worker_options.part);
  worker->add_option(flag::kParts, worker_options.parts);
  worker->add_flag(flag::kForkServer, worker_options.fork_server);
  worker->add_option(flag::kScenarios, worker_options.selection.paths);
  worker->add_option(flag::kOnly, worker_options.selection.only);
  worker->add_option(flag::kKeyword, worker_options.selection.keyword);
  return {worker, [args] { return worker_main(*args); }};
}

// The options `compare` and `check` share: the reports, the baselines, what compare may import, its policies.
void add_compare_flags(CLI::App* cmd, CompareArgs& args) {
  cmd->add_option("--json", args.reports.json, "write the JSON report here");
  cmd->add_option("--junit,--junitxml", args.reports.junit, "write the JUnit XML report here");
  cmd->add_option("--html", args.reports.html, "write the HTML report here (one self-contained file)");
  add_baselines(cmd, args.baselines);
  cmd->add_option("--trust-backend", args.options.trusted_backends,
                  "a backend (name, module or .py path) compare may import for its reducers, for runs that "
                  "recorded it (repeatable; PARITY_TRUST_BACKENDS adds more); built-ins are always trusted");
  cmd->add_flag("--strict-differences", args.options.strict_differences,
                "fail when a difference the candidate declares explains nothing (for whole-corpus runs)");
  // The run's policies; a scenario's own policy= overrides them (README, "Policies").
  PolicyChoice& policy = args.options.policy;
  for (const PolicySpec& spec : policy_specs()) {
    std::string help = std::string(spec.help) + ":";
    for (const std::string& v : spec.values) help += " " + v + (&v == &spec.values.front() ? " (default)," : ",");
    help.pop_back();
    cmd->add_option("--" + std::string(spec.name) + "-policy", policy.*spec.member, help)
        ->check(CLI::IsMember(spec.values));
  }
  cmd->add_option("--max-result-memory", args.options.limits.max_memory,
                  "bytes of memory one result file may expand to when read (copies of its values); a file "
                  "past it is that scenario's error")
      ->capture_default_str()
      ->check(kPositive);
}

// After parsing: the policies given on the command line, which win over the candidate backend's POLICY.
void note_policies_given(const CLI::App* cmd, CompareOptions& options) {
  for (const PolicySpec& spec : policy_specs())
    if (cmd->get_option("--" + std::string(spec.name) + "-policy")->count() > 0)
      options.policies_given.insert(spec.name);
}

Subcommand define_compare(CLI::App& app, const std::string& program) {
  auto args = std::make_shared<CompareArgs>();
  CompareArgs& compare_args = *args;
  auto* compare = app.add_subcommand("compare", "compare a gold and a candidate results directory");
  compare->add_option("gold", compare_args.gold, "gold results directory")->required();
  compare->add_option("candidate", compare_args.candidate, "candidate results directory")->required();
  add_verbosity(compare, compare_args.verbosity);
  add_compare_flags(compare, compare_args);
  compare->add_option("--only", compare_args.options.only, "compare only the scenario with this exact id (repeatable)");
  compare->add_flag("!--no-pickle-probe", compare_args.options.pickle_probe,
                    "do not unpickle stored pickles (without it, only pickles whose MAC verifies with your key "
                    "are unpickled)");
  compare
      ->add_option("--scenarios", compare_args.options.trusted_scenarios,
                   "a scenario directory whose modules compare may import for the reducers they register, when "
                   "outputs need them (repeatable; PARITY_TRUST_SCENARIOS adds more); the bundled corpus is trusted")
      ->check(CLI::ExistingPath);  // a misspelt directory would otherwise trust nothing, silently
  compare
      ->add_option("--timeout", compare_args.timeout,
                   "seconds one scenario's compare may take before it is recorded as timeout and the next one "
                   "compared (default: the runs' own --timeout, as their manifests record it; 0: none)")
      ->check(kNonNegative);
  compare
      ->add_option("-j,--jobs", compare_args.options.jobs,
                   "processes comparing scenarios at once (default 1); the reports do not depend on it")
      ->check(kPositive);
  add_sharding(compare, compare_args.sharding);
  return {compare, [args, compare, program] {
            note_policies_given(compare, args->options);
            return compare_command(*args, program);
          }};
}

int run_main(int argc, char** argv);

// A run's worker forked from `parity check`'s process: its command line parsed and run as `parity _worker` would run
// it, without executing the program again (process.h, InProcessEntry). First Python's own after-fork work (thread
// states, the import lock, os.register_at_fork's callbacks), then the signal handlers an executed worker starts with:
// the run's supervisor's are no worker's (a scenario's SIGINT to itself is a KeyboardInterrupt, SIGTERM ends it).
int worker_in_process(int argc, char** argv) {
  PyOS_AfterFork_Child();
  PyRun_SimpleString(
      "import signal\n"
      "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
      "signal.signal(signal.SIGTERM, signal.SIG_DFL)\n");
  return run_main(argc, argv);
}

// `parity check`: both runs and their compare (check.h); the flags are run's and compare's, given once.
struct CheckArgs {
  RunOptions run;
  CompareArgs compare;
};

Subcommand define_check(CLI::App& app, const std::string& program) {
  auto args = std::make_shared<CheckArgs>();
  auto* check = app.add_subcommand(
      "check", "run scenarios under gold and under a candidate backend side by side, then compare them");
  check->add_option("--backend", args->run.backend,
                    "the candidate: built-in name (fsproxy, ...), dotted module path or .py file; default: "
                    "$PARITY_BACKEND");
  check->add_option("--out", args->run.out, "directory for the two results directories (OUT/gold, OUT/candidate)")
      ->required();
  add_verbosity(check, args->compare.verbosity);
  add_run_flags(check, args->run);
  check->add_flag("--resume", args->run.resume,
                  "finish an interrupted check into --out: each run resumes as run --resume does, then the compare");
  add_compare_flags(check, args->compare);
  check->footer(
      "Each run uses --jobs workers (the two at once) and the compare twice as many processes; the compare trusts the "
      "--scenarios paths and the --backend given. Exit codes as compare's; a run that could not start (2), found "
      "no scenario (5) or was interrupted (130) ends the check with its code before the compare.");
  return {check, [args, check, program] {
            if (args->run.selection.paths.empty()) args->run.selection.paths.push_back(resources().scenarios);
            args->run.program = args->compare.options.program = program;
            args->run.in_process_worker = worker_in_process;
            note_policies_given(check, args->compare.options);
            const auto check_and_compare = [&args](CompareReporter& reports) {
              CheckOptions options{args->run, args->compare};
              return check_scenarios(options, reports);
            };
            const std::filesystem::path& out = args->run.out;
            return compare_until_exit("check", args->compare, check_and_compare,
                                      {check_gold_dir(out), check_candidate_dir(out)}, out.string());
          }};
}

Subcommand define_merge(CLI::App& app, const std::string& program) {
  auto args = std::make_shared<MergeArgs>();
  MergeArgs& merge_args = *args;
  auto* merge = app.add_subcommand("merge", "merge shard compare JSONs into one report, or shard results directories");
  merge->add_option("inputs", merge_args.inputs, "the shards' compare JSONs, or with --out their results directories")
      ->required();
  merge->add_option("--out", merge_args.out, "merge results directories into this new results directory");
  merge->add_option("--json", merge_args.reports.json, "write the merged JSON report here");
  merge->add_option("--junit,--junitxml", merge_args.reports.junit, "write the merged JUnit XML report here");
  merge->add_option("--html", merge_args.reports.html, "write the merged HTML report here");
  add_baselines(merge, merge_args.baselines);
  return {merge, [args, program] { return merge_command(*args, program); }};
}

Subcommand define_report(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  ReportArgs& report_args = *args;
  auto* report = app.add_subcommand("report", "render the HTML and JUnit reports again from a compare JSON");
  report->add_option("report", report_args.input, "the JSON that 'parity compare --json' wrote")->required();
  report->add_option("--html", report_args.reports.html, "write the HTML report here");
  report->add_option("--junit,--junitxml", report_args.reports.junit, "write the JUnit XML report here");
  add_baselines(report, report_args.baselines);
  return {report, [args] { return report_command(*args); }};
}

// Every option name of `command` and of its subcommands, as written on a command line ("--json", "-k").
void collect_option_names(const CLI::App& command, std::set<std::string>& names) {
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) names.insert("--" + name);
    for (const std::string& name : option->get_snames()) names.insert("-" + name);
  }
  for (const CLI::App* subcommand : command.get_subcommands({})) collect_option_names(*subcommand, names);
}

// Whether `text` is a number as strtod reads it whole ("-1", "-2.5e-3"): a value, not an option.
bool is_number(const std::string& text) {
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return end != text.c_str() && *end == '\0';
}

// CLI11 hands an option that takes a value the next argument whatever it looks like: `compare --trust-backend --json
// r.json` trusted "--json" and "r.json", and wrote no report, saying nothing. A value that is the name of one of
// parity's options, or begins with - (a misspelt one, another program's), is refused, naming both, so a forgotten value
// is a usage error. And where a command takes positional arguments, each option takes one value per flag, so that
// `compare --only ID gold cand` leaves the directories to compare instead of taking them for ids ("candidate is
// required").
void guard_option_values(CLI::App& command, const std::set<std::string>& names) {
  const auto options = command.get_options({});
  const bool positionals =
      std::any_of(options.begin(), options.end(), [](const CLI::Option* o) { return o->get_positional(); });
  for (CLI::Option* option : options) {
    if (option->get_positional() || option->get_expected_min() < 1) continue;  // a positional, a flag
    if (positionals) option->allow_extra_args(false);
    option->check(CLI::Validator(
        [&names](std::string& value) -> std::string {
          if (names.count(value.substr(0, value.find('='))))
            return "got the option " + value + " where its value belongs";
          // A misspelt option ("--jsn") or an option of another program ("-x"), as argparse refuses them; a file of
          // that name is ./-x. "-" alone and a negative number are values.
          if (value.size() > 1 && value[0] == '-' && !is_number(value))
            return "got '" + value +
                   "' where its value belongs: a value beginning with - is taken for an option "
                   "(write ./" +
                   value + " for a file of that name)";
          return {};
        },
        "", "not an option"));
  }
  for (CLI::App* subcommand : command.get_subcommands({})) guard_option_values(*subcommand, names);
}

// Every option of `command` and its subcommands that names a file or directory gets kPath's check.
void guard_empty_paths(CLI::App& command) {
  static const std::set<std::string> kPaths = {"scenarios",   "out",    "json", "junit",     "html",   "baseline",
                                               "shard-times", "config", "gold", "candidate", "report", "inputs"};
  for (CLI::Option* option : command.get_options({})) {
    std::string name = option->get_name();
    name.erase(0, name.find_first_not_of('-'));
    if (kPaths.count(name)) option->check(kPath);
  }
  for (CLI::App* subcommand : command.get_subcommands({})) guard_empty_paths(*subcommand);
}

int main_impl(int argc, char** argv) {
  CLI::App app{"parity: does a proxy-array library behave like NumPy, after its results have travelled?"};
  app.require_subcommand(1);
  app.set_version_flag("--version", PARITY_VERSION);
  app.footer(
      "Exit codes: 0 nothing failed; 1 something failed; 2 usage or infrastructure error; 5 the selection holds no "
      "scenario (pytest's \"no tests collected\"); 130 interrupted.");
  const std::string program = self_path(argv[0]);
  const std::vector<Subcommand> subcommands = {define_list(app),
                                               define_run(app, program),
                                               define_worker(app),
                                               define_coverage(app, program),
                                               define_shrink(app, program),
                                               define_compare(app, program),
                                               define_check(app, program),
                                               define_merge(app, program),
                                               define_report(app)};
  ConfigFileArgs config_args;  // defaults from [tool.parity] (config_file.h); the command line wins
  add_config_flags({app.get_subcommand("list"), app.get_subcommand("run"), app.get_subcommand("compare"),
                    app.get_subcommand("check"), app.get_subcommand("coverage")},
                   config_args);
  std::set<std::string> option_names;  // read by guard_option_values' checks as the command line is parsed
  collect_option_names(app, option_names);
  guard_option_values(app, option_names);
  guard_empty_paths(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  if (const int rc = apply_config_file(app, config_args); rc != kExitOk) return rc;
  for (const Subcommand& subcommand : subcommands)
    if (*subcommand.command) return subcommand.run();
  return kExitUsage;  // require_subcommand(1): never reached
}

// main_impl with parity's last word on what escaped it.
int run_main(int argc, char** argv) {
  second_stop_signal_ends_process = 1;  // a program's Ctrl-C twice (deadline.h), not the Python API host's
  try {
    return main_impl(argc, argv);
  } catch (const pybind11::error_already_set& e) {
    // Ctrl-C (or list's SIGTERM) while Python ran a command's own code: an interruption (exit 130), not parity's bug.
    if (e.matches(PyExc_KeyboardInterrupt)) {
      std::fprintf(stderr, "parity: stopped by a signal (Ctrl-C or SIGTERM)\n");
      return kExitInterrupted;
    }
    std::fprintf(stderr, "parity: internal error (Python): %s\n", printable(e.what(), Newlines::kKeep).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parity: %s\n", printable(e.what(), Newlines::kKeep).c_str());
  } catch (const Interrupted& e) {  // a stop signal (deadline.h) that no command caught: still an interruption
    std::fprintf(stderr, "parity: stopped by signal %d\n", e.signal);
    return kExitInterrupted;
  }
  return kExitUsage;
}

}  // namespace
}  // namespace parity

int main(int argc, char** argv) { return parity::run_main(argc, argv); }
