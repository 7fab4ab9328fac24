"""What a scenario prints, kept per scenario for the reports (JUnit's system-out/system-err) while it still reaches the
worker's own stdout/stderr (where a crash report reads its last words)."""
from __future__ import annotations

import sys
import warnings

from parity import isolation
from parity._scenario import describe_exception

# Per stream: the manifest holding it is rewritten during a run (runner.cc, Supervisor::save), so it must stay small.
# The tail is kept, as a crash report keeps a worker's last lines: what a scenario printed last is nearest its failure.
LIMIT = 8192


class _Tee:
    """A text stream that writes through to `stream` and keeps a copy of what was written."""

    def __init__(self, stream):
        self._stream = stream
        self._parts: list = []
        self._size = 0
        self._dropped = False

    def write(self, text):
        written = self._stream.write(text)
        if isinstance(text, str) and text:
            self._parts.append(text)
            self._size += len(text)
            if self._size > 4 * LIMIT:  # bounded while it runs too, not only at the end
                self._parts, self._size, self._dropped = [self.text(LIMIT)], LIMIT, True
        return written

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def text(self, limit: int) -> str:
        whole = "".join(self._parts)
        return whole if len(whole) <= limit else whole[-limit:]

    def dropped(self) -> bool:
        return self._dropped or self._size > LIMIT

    def __getattr__(self, name):  # flush, fileno, encoding, isatty, ...: the real stream's
        return getattr(self._stream, name)


def _called(scenario, backend) -> dict:
    """scenario.call(backend), isolated. A KeyboardInterrupt that no stop signal raised (`raise KeyboardInterrupt` in
    the scenario) is the scenario's error, as any exception it raises: it had ended the worker as if Ctrl-C'd, its
    scenario a crash. One a SIGINT raised still ends the worker."""
    try:
        return isolation.call_isolated(scenario.call, backend, isolated=getattr(scenario, "isolated", True))
    except KeyboardInterrupt as exc:
        if isolation.stop_signalled():
            raise
        error = describe_exception(exc)
        error["message"] = "KeyboardInterrupt raised by the scenario itself, not by a signal" + (
            f": {error['message']}" if error["message"] else "")
        return {"status": "error", "error": error}


def call_capturing(scenario, backend) -> dict:
    """scenario.call(backend), with what it printed through sys.stdout and sys.stderr as the outcome's "output":
    {"stdout": text, "stderr": text}, each stream present only when it printed something, and "truncated": true
    when only the last LIMIT characters of a stream were kept. What bypasses Python's streams (C code writing to
    file descriptor 1, a child process) reaches the worker's output only."""
    tees = {name: _Tee(getattr(sys, name)) for name in ("stdout", "stderr")}
    for name, tee in tees.items():
        setattr(sys, name, tee)
    try:
        # Fresh warning registries (catch_warnings resets them) and filters per scenario: Python shows a warning
        # once per place in a process, so without this a scenario's stderr would depend on what ran before it in
        # the same worker (the partition of a shard or of --jobs), and a scenario's filters would leak into the next.
        with warnings.catch_warnings():
            outcome = _called(scenario, backend)
    finally:
        for name, tee in tees.items():
            if getattr(sys, name) is tee:  # a scenario that replaced the stream itself keeps its own
                setattr(sys, name, tee._stream)
    output = {name: tee.text(LIMIT) for name, tee in tees.items() if tee.text(LIMIT)}
    if any(tee.dropped() for tee in tees.values()):
        output["truncated"] = True
    if output:
        outcome["output"] = output
    return outcome
