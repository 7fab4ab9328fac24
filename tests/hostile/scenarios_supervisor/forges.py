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


def _send_canonical(*events):
    # As the worker writes its replies (nlohmann's compact dump: sorted keys, no spaces), which the supervisor reads
    # without parsing them (src/parity/run/protocol.h, read_plain_done): its checks must hold there too.
    os.write(_reply_fd(), b"".join(json.dumps(e, separators=(",", ":"), sort_keys=True).encode() + b"\n"
                                   for e in events))


def _canonical_done(scenario_id, **fields):
    record = {"id": scenario_id, "status": "ok", "file": "", "seconds": 0.5, "fidelity": {"outputs": "x"}, **fields}
    return {"event": "done", "record": record, "retiring": False}


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


@parity.scenario
def forges_canonical_records_of_another_scenario(xp):
    _send_canonical(_canonical_done("x"), _canonical_done("x"))
    return {"a": xp.zeros(2)}


def _forges_its_own_canonical_record(name, **fields):
    # A scenario that forges its own done record, which names a file of another or a status only the supervisor gives.
    def scenario(xp):
        _send_canonical(_canonical_done(f"forges.{name}", **fields))
        return {"a": xp.zeros(2)}
    scenario.__name__ = scenario.__qualname__ = name
    return parity.scenario(scenario)


forges_its_own_canonical_record_with_an_escaping_file = _forges_its_own_canonical_record(
    "forges_its_own_canonical_record_with_an_escaping_file", file="../x")
forges_its_own_canonical_record_naming_another_file = _forges_its_own_canonical_record(
    "forges_its_own_canonical_record_naming_another_file", file="results/x.parity")
forges_its_own_canonical_record_with_a_status_of_the_supervisor = _forges_its_own_canonical_record(
    "forges_its_own_canonical_record_with_a_status_of_the_supervisor", status="timeout")


@parity.scenario
def forges_a_canonical_started_event(xp):
    _send_canonical({"event": "started"})
    return {"a": xp.zeros(2)}
