"""The compare statuses' vocabulary on the Python side (the HTML report, `parity shrink`), defined once here."""

# Display order: what needs a person first. `FAILING` are the statuses that make a compare red (its exit 1). Both are
# copies of src/parity/base/outcome.h's kStatusesWorstFirst (in order) and kFailingStatuses, which tests/vocabulary
# holds them to.
STATUS_ORDER = ("fail", "error", "timeout", "xpass", "xfail", "skip", "pass")
FAILING = ("fail", "error", "timeout", "xpass")
