"""Scenarios that write forged replies into their worker's reply pipe: none may abort the run or replace a record."""
import fcntl
import json
import os
import stat

import parity


def _reply_fd():
    # The reply pipe: a write-only pipe on 200 (src/parity/run/protocol.h), on 3 before the protocol moved there.
    for fd in (200, 3):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                return fd
        except OSError:
            continue
    raise RuntimeError("no reply pipe found")


def _send(*events):
    os.write(_reply_fd(), b"".join(json.dumps(e).encode() + b"\n" for e in events))


def _done(scenario_id, **fields):
    record = {"id": scenario_id, "status": "ok", "file": "", "seconds": 0.0, "meta": {}, **fields}
    return {"event": "done", "record": record, "retiring": False}


@parity.scenario
def forges_a_fatal_event(xp):
    _send({"event": "fatal", "message": "forged: abort the run"})
    return {"a": xp.zeros(2)}


@parity.scenario
def forges_records_of_another_scenario(xp):
    _send(_done("x"), _done("x"), _done("x"))
    return {"a": xp.zeros(2)}


@parity.scenario
def forges_its_own_record_with_an_escaping_file(xp):
    _send(_done("forges.forges_its_own_record_with_an_escaping_file", file="../x"))
    return {"a": xp.zeros(2)}


@parity.scenario
def forges_a_started_event(xp):
    _send({"event": "started"})
    return {"a": xp.zeros(2)}
