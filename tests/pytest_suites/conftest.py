"""tests/pytest_suites: parity's tests of pytest-style suites; the suites they run (suites/) are data, not its tests."""
collect_ignore_glob = ["suites/*"]
