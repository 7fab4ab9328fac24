"""What a scenario may change in the worker process that runs it, put back after it: no scenario's outputs may depend
on which scenarios ran before it in the same worker (the partition of -j, a shard, the order), nor its result file on
what a scenario before it did to the process (README, "Scenario isolation")."""
from __future__ import annotations

import contextvars
import functools
import os
import signal
import sys
import time

try:  # signal's own getsignal wraps each answer in an enum: 20 times slower, for all of them every scenario
    import _signal
except ImportError:  # a Python without it: signal's answers are the same handlers, enum members are singletons
    _signal = signal

# The standard streams: a scenario that closed or replaced file descriptor 1 had the next scenario's own files take
# it, and what that scenario printed went into them.
_STREAMS = (0, 1, 2)

# The interval timers, each a signal's: signal.alarm's (ITIMER_REAL), left armed by a scenario, went off in a later one,
# which SIGALRM's default action ended as a crash. A worker arms none of its own.
_TIMERS = (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL, signal.ITIMER_PROF)


# Room for the C library's struct sigaction, read and written whole (glibc's is 152 bytes): its layout is not needed.
_SIGACTION_SIZE = 512

# The seed of Python's `random` and NumPy's legacy generator that every native scenario starts from (_Worker): a worker
# had them as its start left them, seeded from the operating system, so a scenario drawing from them without seeding
# them gave other outputs in every run, gold against gold included. Seeded once a worker, not per scenario: put_back
# returns both to this state after each one.
GLOBAL_GENERATORS_SEED = 0


def _identity(fd: int):
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class _Worker:
    """The state a worker's scenarios start from, taken before its first scenario (capture.call_capturing)."""

    def __init__(self):
        self.pid = os.getpid()
        self.umask = os.umask(0o022)
        os.umask(self.umask)
        self.recursion_limit = sys.getrecursionlimit()
        try:
            self.cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            self.cwd = None
        # Copies of the standard streams (close-on-exec, as os.dup makes them), and what each one is.
        self.streams = {}
        for fd in _STREAMS:
            ident = _identity(fd)
            if ident is not None:
                self.streams[fd] = (os.dup(fd), ident)
        self.random = _LegacyRandom.taken(GLOBAL_GENERATORS_SEED)
        self.python_random = _PythonRandom(GLOBAL_GENERATORS_SEED)
        self.signals = _Signals()
        self.environment = _Environment()
        # Whether a pytest test ran since this state was taken (call_isolated): what it and its fixtures left is the
        # state the next scenarios start from, taken again before the next scenario that is put back.
        self.stale = False

    def close(self) -> None:
        """Closes the descriptors it holds (the working directory's, the streams' copies): replaced by a new one."""
        for fd in [self.cwd, *(copy for copy, _ in self.streams.values())]:
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass

    def put_back(self) -> None:
        self.signals.put_back()  # first: an alarm the scenario left armed goes off in none of the rest
        os.umask(self.umask)
        if sys.getrecursionlimit() != self.recursion_limit:
            sys.setrecursionlimit(self.recursion_limit)
        if self.cwd is not None:
            try:
                os.fchdir(self.cwd)
            except OSError:
                pass
        for fd, (copy, ident) in self.streams.items():
            if _identity(fd) != ident:
                os.dup2(copy, fd, inheritable=True)
        if self.random is None:  # numpy.random first imported by this scenario: the next ones start from the seed
            self.random = _LegacyRandom.taken(GLOBAL_GENERATORS_SEED)
        else:
            self.random.put_back()
        self.python_random.put_back()
        self.environment.put_back()


def _bytes_at(address: int, size: int):
    """A reader of `size` bytes of memory at `address` (a generator's C struct): looked up once, as it is read after
    every scenario."""
    import ctypes

    return functools.partial(ctypes.string_at, address, size)


class _LegacyRandom:
    """numpy.random's global RandomState (np.random.seed, np.random.random): seeded or drawn from by one scenario,
    the next one's draws had depended on it. Its state is read as the bytes of its bit generator's C struct, a
    microsecond, and set back (tens of microseconds) only when they changed."""

    def __init__(self, state, address: int, size: int):
        self.state = state
        self.read = _bytes_at(address, size)
        self.raw = self.read()

    @classmethod
    def taken(cls, seed=None):
        """Its state now, seeded with `seed` first unless None; None without NumPy."""
        if "numpy" not in sys.modules:  # a worker of a backend without NumPy: nothing to keep
            return None
        import ctypes

        import numpy.random  # the worker's first seeded generator imports it anyway (_scenario._default_rng)

        if seed is not None:
            numpy.random.seed(seed)
        rand = numpy.random.mtrand._rand
        bit_generator = rand._bit_generator
        # MT19937's struct: 624 32-bit words and a position; the Gaussian kept between calls is RandomState's own.
        return cls(rand.get_state(), bit_generator.ctypes.state_address, ctypes.sizeof(ctypes.c_uint32) * 625)

    def put_back(self) -> None:
        # A Gaussian kept in the state taken (state[3], has_gauss) is used by the next draw of one without a change to
        # the bytes read here: such a state is set back after every scenario.
        if self.read() != self.raw or self.state[3] != 0:
            import numpy

            numpy.random.set_state(self.state)


class _PythonRandom:
    """Python's random module (random.seed, random.random, random.gauss): its hidden Random instance, seeded or drawn
    from by one scenario, had fed the next one's draws. Read as the bytes of its C struct where CPython keeps them as
    getstate() says (under a microsecond; getstate() takes ~5), and set back (~3 microseconds) only when it changed."""

    def __init__(self, seed=None):
        import random  # here, not at a scenario's first import of it: that scenario's seed had been the start

        # The hidden instance the module's functions are bound to: random._inst in CPython, found through one of them
        # where that name is missing.
        self.instance = getattr(random, "_inst", None) or random.random.__self__
        if seed is not None:
            self.instance.seed(seed)
        self.state = self.instance.getstate()
        self.read = _mersenne_reader(self.instance, self.state[1]) or self.instance.getstate
        self.raw = self.read()

    def put_back(self) -> None:
        # gauss() keeps the second value it drew in an attribute, outside the struct read here.
        if self.read() != self.raw or self.instance.gauss_next is not self.state[2]:
            self.instance.setstate(self.state)


def _mersenne_reader(instance, words: tuple):
    """A reader of `instance`'s C struct (CPython's _random.Random: an int position, then the Mersenne Twister's
    words) when its bytes are where and what getstate()'s `words` (the words, then the position) say; else None
    (another Python, another layout), and getstate() is compared instead."""
    import struct

    expected = struct.pack(f"=i{len(words) - 1}I", words[-1], *words[:-1])
    if sys.implementation.name != "cpython" or type(instance).__basicsize__ < object.__basicsize__ + len(expected):
        return None  # id() is no address, or the struct is too small to hold it: nothing may be read there
    read = _bytes_at(id(instance) + object.__basicsize__, len(expected))
    return read if read() == expected else None


class _Signals:
    """The worker's signal handlers, and none of the interval timers armed: a scenario's handler (signal.signal) or
    alarm (signal.alarm, signal.setitimer) stayed for the next scenarios. Handlers are compared as Python keeps them,
    ~1 us for all, and one that changed is set back in Python and then at the C level as the worker had it: parity's
    own handlers are installed outside Python (src/parity/run/process.cc), which Python alone cannot set back."""

    def __init__(self):
        self.numbers = tuple(signal.valid_signals())
        self.actions = _c_actions(self.numbers)
        self.handlers = self._now()
        # What Python's record reads once they are set back: of a handler installed outside Python (None) it keeps
        # what a scenario set, which Python cannot set back to None.
        self.set_back = self.handlers
        # So the C-level actions of those signals are set back after every scenario once their record is no longer
        # None, ~1 us each: a later scenario setting the same handler again is no change to Python's record, and its
        # change had stayed (parity's "supervisor gone" handler, SIGRTMIN+4, left ignored).
        self.outside = ()

    def _now(self) -> tuple:
        return tuple(map(_signal.getsignal, self.numbers))

    def put_back(self) -> None:
        for timer in _TIMERS:  # first: an alarm must not go off once its handler is set back to the default action
            signal.setitimer(timer, 0)
        for action in self.outside:
            action()
        now = self._now()
        if now == self.set_back:
            return
        for number, handler, handler_then in zip(self.numbers, now, self.handlers):
            if handler is not handler_then:
                self._set_back(number, handler_then)
        self.set_back = self._now()
        self.outside = tuple(self.actions[number] for number, handler, handler_then
                             in zip(self.numbers, self.set_back, self.handlers)
                             if handler_then is None and handler is not None and number in self.actions)

    def _set_back(self, number: int, handler) -> None:
        if handler is not None:  # None: installed outside Python, which can only be set back at the C level
            _signal.signal(number, handler)
        if number in self.actions:
            self.actions[number]()


def _c_actions(numbers: tuple) -> dict:
    """Per signal number, a function that sets its C-level action (handler, mask, flags) back to what it is now, read
    and written whole with sigaction(2); {} where ctypes cannot reach the C library's sigaction."""
    try:
        import ctypes

        sigaction = ctypes.CDLL(None).sigaction
    except (ImportError, OSError, AttributeError):
        return {}
    actions = {}
    for number in numbers:
        action = ctypes.create_string_buffer(_SIGACTION_SIZE)
        if sigaction(number, None, action) == 0:
            actions[number] = functools.partial(sigaction, number, action, None)
    return actions


class _Environment:
    """The environment variables: one a scenario set, changed or deleted stayed so for the next scenarios and what
    they start. Compared as os.environ keeps them, encoded in its private dict `_data` (well under a microsecond:
    unchanged values are the same objects), and only those that changed are set back, in os.environ and, through
    putenv and unsetenv as os.environ itself does, in the C environment. Where os.environ has no `_data` (another
    Python), a decoded copy of it is compared instead (a few microseconds), and set back through os.environ itself."""

    def __init__(self):
        self.environ = os.environ  # a scenario that replaced os.environ itself cannot break put_back
        self.data = getattr(self.environ, "_data", None)
        encodekey = getattr(self.environ, "encodekey", None)
        if self.data is None or encodekey is None:
            self.data = None
            self.tz = "TZ"
        else:
            # The time zone's variable: set back, the C library's and the time module's idea of local time is read
            # again from it.
            self.tz = encodekey("TZ")
        self.variables = dict(self._now())

    def _now(self) -> dict:
        return dict(self.environ) if self.data is None else self.environ._data

    def put_back(self) -> None:
        now = self._now()
        if now == self.variables:
            return
        changed = [key for key in now.keys() | self.variables.keys() if now.get(key) != self.variables.get(key)]
        for key in changed:
            self._set(now, key, self.variables.get(key))
        if self.tz in changed and hasattr(time, "tzset"):
            time.tzset()

    def _set(self, now: dict, key, value) -> None:
        """Sets `key` to `value` in os.environ and the C environment, or deletes it there when `value` is None."""
        if self.data is None:  # os.environ's own item methods call putenv and unsetenv
            if value is None:
                self.environ.pop(key, None)
            else:
                self.environ[key] = value
        elif value is None:
            os.unsetenv(key)
            del now[key]
        else:
            os.putenv(key, value)
            now[key] = value


_worker: _Worker | None = None

# Whether a stop signal reached this worker during the scenario now running (_on_stop_signal; call_isolated clears it
# as each one starts): a KeyboardInterrupt is then the run's end; without one it is an exception the scenario raised,
# its error like any other. A SIGINT an earlier scenario sent itself and caught had made every later one's own
# `raise KeyboardInterrupt` the worker's end.
_stop_signalled = False


def _on_stop_signal(number: int, frame) -> None:
    """Python's default_int_handler (a KeyboardInterrupt), noting first that the signal came."""
    global _stop_signalled
    _stop_signalled = True
    signal.default_int_handler(number, frame)


def _note_stop_signals() -> None:
    """Has the stop signals that raise KeyboardInterrupt here (a worker's SIGINT; its SIGTERM keeps its default
    action, the worker's end) note that they came. Before the worker's handlers are taken: they are set back to it."""
    for number in (signal.SIGINT, signal.SIGTERM):
        if _signal.getsignal(number) is signal.default_int_handler:
            _signal.signal(number, _on_stop_signal)


def stop_signalled() -> bool:
    """Whether a stop signal (SIGINT, Ctrl-C) reached this worker since the current scenario started: a
    KeyboardInterrupt is then the run's end, not a scenario's exception."""
    return _stop_signalled


def call_isolated(function, *args, isolated=True):
    """function(*args) in a copy of the current context (NumPy's print options and error state live in context
    variables), with what else a scenario may change in the process put back afterwards. A forked child of the
    scenario that returns here ends at once: it would otherwise run the worker's loop beside its parent.

    Not `isolated` (a pytest test, PytestScenario): function(*args) in the current context, nothing put back, as
    pytest runs a suite's tests. Its setup runs its module's and session's fixtures the first time, and what they set
    (an environment variable, a seed, a signal handler, a working directory, np.seterr) must last for their scope, the
    later tests seeing it and their teardowns finding it; put back after the first test it had not. The state the
    next scenario put back is put back to is then taken again, before it: what the pytest session left set up."""
    global _worker, _stop_signalled
    _stop_signalled = False
    if _worker is None or _worker.pid != os.getpid():
        _note_stop_signals()
        _worker = _Worker()
    elif isolated and _worker.stale:
        _worker.close()
        _worker = _Worker()
    worker = _worker
    if not isolated:
        worker.stale = True
    try:
        return contextvars.copy_context().run(function, *args) if isolated else function(*args)
    finally:
        if os.getpid() != worker.pid:
            os._exit(0)
        if isolated:
            worker.put_back()
