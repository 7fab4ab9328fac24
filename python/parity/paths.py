"""The output-path grammar in Python: how a value's place inside the outputs is written (outputs['a'][2].mask).

src/parity/codec/paths.cc is the same grammar in C++ (the codec writes result files with it; the fidelity digests
of parity.probe are keyed by it). The two must agree character for character, or the digests stop matching:
tests/codec_test.cc (PathGrammar) feeds both the same tricky keys and fails on any difference.
"""
from __future__ import annotations


def key_path(path: str, key) -> str:
    """The path of a dict entry, as Python would index it: outputs['a']['it\\'s'] (quotes and backslashes escaped)."""
    escaped = str(key).replace("\\", "\\\\").replace("'", "\\'")
    return f"{path}['{escaped}']"


def item_path(path: str, i: int) -> str:
    """The path of element `i` of a list or tuple: outputs['a'][2]."""
    return f"{path}[{i}]"


def index_path(path: str, index: tuple) -> str:
    """The path of an element of an object array: outputs['a'][2, 0], or outputs['a'][()] for a 0-d array."""
    return f"{path}[{', '.join(map(str, index)) if index else '()'}]"


def state_path(path: str, key: str) -> str:
    """The path of entry `key` of a reducer's dict state: `path.key`, or `path + key` when the key starts with '['
    or '.' (a DataFrame column reads outputs['df']['a'])."""
    return path + key if key[:1] in ("[", ".") else f"{path}.{key}"
