# parity_add_scenario_tests(): registers a directory of scenarios as CTest tests for one backend pair.
#
#   parity_add_scenario_tests(DIRECTORY dir CANDIDATE backend [GOLD backend] [NAME name] [RESULTS dir]
#                             [COMPARE_ARGS arg...])
#
# It adds three fixture setup tests, parity-run.<name>.gold and parity-run.<name>.candidate (one `parity run` each
# over the whole directory, labels `gold` / `candidate`) and parity-compare.<name> (one `parity compare` of the two,
# label `compare`), and for every scenario id (for a pytest-style test, its node id: `test_x.py::test_y[1]`)
# gold.<id> and candidate.<id> (its run status in that run) and compare.<id> (its compare status), whose
# FIXTURES_REQUIRED make `ctest -L compare` or `ctest -R <one id>` run the setups they need first. Ids are listed at configure time with the
# configured interpreter; editing a scenario file re-runs the configure step. COMPARE_ARGS go to every
# `parity compare`, e.g. `COMPARE_ARGS --layout-policy strides` (README, "Policies").
function(parity_add_scenario_tests)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;DIRECTORY;GOLD;CANDIDATE;RESULTS" "COMPARE_ARGS")
  if(arg_UNPARSED_ARGUMENTS OR arg_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "parity_add_scenario_tests: unknown or empty arguments: "
                        "${arg_UNPARSED_ARGUMENTS} ${arg_KEYWORDS_MISSING_VALUES}")
  endif()
  if(NOT arg_DIRECTORY OR NOT arg_CANDIDATE)
    message(FATAL_ERROR "parity_add_scenario_tests: DIRECTORY and CANDIDATE are required")
  endif()
  if(NOT arg_GOLD)
    set(arg_GOLD gold)
  endif()
  if(NOT arg_NAME)
    get_filename_component(arg_NAME "${arg_DIRECTORY}" NAME)
  endif()
  if(NOT arg_RESULTS)
    set(arg_RESULTS "${CMAKE_BINARY_DIR}/parity-results/${arg_NAME}")
  endif()

  # A pytest suite's ini files decide what it collects (python_files, addopts) as its .py files do.
  file(GLOB_RECURSE scenario_files CONFIGURE_DEPENDS "${arg_DIRECTORY}/*.py" "${arg_DIRECTORY}/*.ini"
       "${arg_DIRECTORY}/*.toml" "${arg_DIRECTORY}/*.cfg")
  # parity's own package, beside this file: PROJECT_SOURCE_DIR is the caller's project when parity is a subproject.
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -E env "PYTHONPATH=${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../python"
            "${Python_EXECUTABLE}" -m parity list "${arg_DIRECTORY}"
    OUTPUT_VARIABLE listing ERROR_VARIABLE list_errors RESULT_VARIABLE list_rc)
  if(list_rc)
    message(FATAL_ERROR "parity_add_scenario_tests: listing ${arg_DIRECTORY} failed: ${list_errors}")
  elseif(list_errors)
    message(WARNING "parity_add_scenario_tests: ${list_errors}")
  endif()
  string(STRIP "${listing}" listing)
  string(REPLACE "\n" ";" ids "${listing}")

  # One gold run, one candidate run and one compare over the whole directory, as fixture setup tests; each
  # scenario's tests judge it from their results (parity_scenario_check.py, which indexes them by id once they are
  # written: a test reads its scenario's entry, not the whole manifest or report), about 0.03 s a test instead of a
  # `parity run` or `parity compare` of its own (an interpreter and NumPy each, about 0.4-1 s).
  set(check "${Python_EXECUTABLE}" -S -I "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/parity_scenario_check.py")
  set(gold_dir "${arg_RESULTS}/gold")
  set(candidate_dir "${arg_RESULTS}/candidate")
  set(report "${arg_RESULTS}/compare.json")
  set(fixture "parity.${arg_NAME}")
  # The `parity` target where the project has one (parity itself, or parity as a subdirectory), else `parity` on PATH.
  set(parity "$<$<TARGET_EXISTS:parity>:$<TARGET_FILE:parity>>$<$<NOT:$<TARGET_EXISTS:parity>>:parity>")
  add_test(NAME "parity-run.${arg_NAME}.gold"
           COMMAND ${check} shared "${gold_dir}" -- ${parity} run -q --backend "${arg_GOLD}" --role gold
                   --scenarios "${arg_DIRECTORY}" --out "${gold_dir}")
  add_test(NAME "parity-run.${arg_NAME}.candidate"
           COMMAND ${check} shared "${candidate_dir}" -- ${parity} run -q --backend "${arg_CANDIDATE}"
                   --role candidate --scenarios "${arg_DIRECTORY}" --out "${candidate_dir}")
  # The backends and the scenario directory named here are the project's own: compare may import them, for
  # their reducers and a pytest test's assert_eq asserter (untrusted, every assert_eq would fail as such).
  add_test(NAME "parity-compare.${arg_NAME}"
           COMMAND ${check} shared "${report}" -- ${parity} compare -q "${gold_dir}" "${candidate_dir}"
                   --json "${report}" --trust-backend "${arg_GOLD}" --trust-backend "${arg_CANDIDATE}"
                   --scenarios "${arg_DIRECTORY}" ${arg_COMPARE_ARGS})
  set_tests_properties("parity-run.${arg_NAME}.gold" PROPERTIES LABELS gold FIXTURES_SETUP "${fixture}.gold")
  set_tests_properties("parity-run.${arg_NAME}.candidate" PROPERTIES LABELS candidate
                       FIXTURES_SETUP "${fixture}.candidate")
  set_tests_properties("parity-compare.${arg_NAME}" PROPERTIES LABELS compare FIXTURES_SETUP "${fixture}.compare"
                       FIXTURES_REQUIRED "${fixture}.gold;${fixture}.candidate")

  foreach(id IN LISTS ids)
    add_test(NAME "gold.${id}" COMMAND ${check} run "${gold_dir}" "${id}")
    add_test(NAME "candidate.${id}" COMMAND ${check} run "${candidate_dir}" "${id}")
    add_test(NAME "compare.${id}" COMMAND ${check} compare "${report}" "${id}")
    set_tests_properties("gold.${id}" PROPERTIES LABELS gold FIXTURES_REQUIRED "${fixture}.gold")
    set_tests_properties("candidate.${id}" PROPERTIES LABELS candidate FIXTURES_REQUIRED "${fixture}.candidate")
    set_tests_properties("compare.${id}" PROPERTIES LABELS compare FIXTURES_REQUIRED "${fixture}.compare")
  endforeach()
endfunction()
