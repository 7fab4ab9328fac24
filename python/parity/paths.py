"""The output-path grammar: how a value's place inside the outputs is written (outputs['a'][2].mask).

It is written once, in C++ (src/parity/codec/paths.cc): the codec writes result files with it and parity.probe keys
the fidelity digests by it, so the two cannot spell a path apart. This module re-exports those functions from the
compiled module this process has: the builtin module _parity_paths inside the parity program (its workers and
embedding tests), or the extension module parity._core in any other python.

key_path(path, key: str), item_path(path, i: int), state_path(path, key: str): the path of a dict entry, a sequence's
element, a reducer's state entry; index_path(index: tuple of int): an object array element's index as a path suffix,
[2, 0] or [()] for a 0-d array.
"""
import sys

if "_parity_paths" in sys.builtin_module_names:  # inside the parity program: never load the extension module there
    from _parity_paths import index_path, item_path, key_path, state_path
else:
    from parity.api import _core

    _module = _core("parity.paths (the output paths of the fidelity digests, outside the parity program)")
    index_path, item_path, key_path, state_path = (_module.index_path, _module.item_path, _module.key_path,
                                                   _module.state_path)

__all__ = ["index_path", "item_path", "key_path", "state_path"]
