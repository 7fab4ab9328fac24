"""Codec test cases: every layout and type the result codec must carry, and `same` to compare two trees.

Imported by tests/codec_test.cc (written in one process, re-read in a fresh one) and by the decoder fuzzer
(tests/fuzz/decoder_fuzz.cc), whose seed files are these cases. Each case must be deterministic.
"""
import os
import struct
import tempfile
import numpy as np
import parity.reducers

def _readonly(a):
    a.flags.writeable = False
    return a

def _misaligned():
    buf = np.zeros(8 * 10 + 1, np.uint8)
    a = buf[1:].view('<f8')
    a[:] = np.arange(10)
    return a

def _structured():
    dt = np.dtype({'names': ['a', 'b', 'c'], 'formats': ['<i4', '>f8', ('u1', (2,))],
                   'offsets': [0, 8, 20], 'itemsize': 24})
    a = np.zeros(3, dt)
    a['a'] = [1, -2, 3]; a['b'] = [0.5, np.nan, -1e300]; a['c'] = [[1, 2], [3, 4], [5, 255]]
    return a

def _nan_payloads():
    return np.array([0x7ff8000000000123, 0xfff8000000000000, 0x7ff0000000000001], dtype='<u8').view('<f8')

CASES = {
    'c_order': lambda: np.arange(24.0).reshape(4, 6),
    'f_order': lambda: np.asfortranarray(np.arange(24.0).reshape(4, 6)),
    'strided': lambda: np.arange(120.0).reshape(10, 12)[::3, 1::2],
    'transposed': lambda: np.arange(60, dtype=np.int32).reshape(3, 4, 5).transpose(2, 0, 1),
    'negative_strides': lambda: np.arange(30.0).reshape(5, 6)[::-1, ::-2],
    'broadcast': lambda: np.broadcast_to(np.arange(3.0), (4, 3)),
    'zero_stride_writeable': lambda: np.lib.stride_tricks.as_strided(np.arange(3.0), (4, 3), (0, 8)),
    'empty': lambda: np.zeros((0, 3)),
    'empty_strided': lambda: np.zeros((4, 0, 6))[:, :, ::2],
    'zero_d': lambda: np.array(3.5),
    'big_endian': lambda: np.arange(12, dtype='>f8').reshape(3, 4),
    'big_endian_int_f': lambda: np.asfortranarray(np.arange(12, dtype='>i4').reshape(3, 4)),
    'readonly': lambda: _readonly(np.arange(6.0)),
    'readonly_view': lambda: _readonly(np.arange(20.0)[3:15:4]),
    'misaligned': _misaligned,
    'bool': lambda: np.arange(10) % 3 == 0,
    'complex_big_endian': lambda: (np.arange(6) + 1j * np.arange(6)[::-1]).astype('>c16'),
    'complex64': lambda: np.array([1 + 2j, np.nan + 0j, complex(0, np.inf)], np.complex64),
    'ints': lambda: [np.arange(-2, 3, dtype=t) for t in ('i1', 'i2', '<i4', '>i8')] +
                    [np.arange(5, dtype=t) for t in ('u1', 'u2', '>u4', '<u8')],
    'float16': lambda: np.linspace(-2, 2, 7, dtype=np.float16),
    'longdouble': lambda: np.arange(4, dtype=np.longdouble) / 3,
    'nan_payloads': _nan_payloads,
    'signed_zero_inf': lambda: np.array([-0.0, 0.0, np.inf, -np.inf]),
    'datetime': lambda: np.array(['2020-01-01', 'NaT', '1970-01-01T00:00:01'], dtype='M8[ms]'),
    'timedelta_big_endian': lambda: np.array([1, -2, np.timedelta64('NaT')], dtype='>m8[us]'),
    'unicode_big_endian': lambda: np.array(['a', 'h\u00e9llo', '\u2713\u2713'], dtype='>U5'),
    'bytes': lambda: np.array([b'ab', b'\x00\xff', b''], dtype='S3'),
    'structured_mixed_order_padding': _structured,
    'aligned_struct': lambda: np.ones(3, dtype=np.dtype([('x', 'u1'), ('y', '<f8')], align=True)),
    'subarray_field_view': lambda: _structured()['c'],
    'void': lambda: np.frombuffer(b'abcdefgh', dtype='V4').copy(),
    'python_scalars': lambda: {'f': 1.5, 'neg_zero': -0.0, 'nan': float('nan'), 'inf': float('-inf'),
                               'big': 2 ** 200, 'neg': -7, 'c': complex(1, -0.0), 'str': '\u00fcn\u00efcode \u2713',
                               'surrogate': 'a\ud800b', 'bytes': b'\x00\x01', 'none': None, 'true': True, 'false': False},
    'numpy_scalars': lambda: [np.float32(1.25), np.int8(-3), np.uint64(2 ** 64 - 1), np.complex64(1 + 2j),
                              np.bool_(True), np.datetime64('2020-01-01', 'D'), np.timedelta64('NaT', 's'),
                              np.str_('x'), np.bytes_(b'y'), np.float16(-0.0), np.longdouble(1) / 3],
    'nested': lambda: {'a': [1, (2.0, {'b': np.arange(3)})], 'empty': [[], (), {}], 'order': {'z': 1, 'a': 2}},
}

def _value_bytes(a):
    """The bytes that hold values: x87 long double's padding is uninitialized memory, not value."""
    if a.dtype.kind in 'fc' and a.dtype.itemsize // (2 if a.dtype.kind == 'c' else 1) in (12, 16):
        part = a.dtype.itemsize // (2 if a.dtype.kind == 'c' else 1)
        rows = np.frombuffer(a.tobytes(), np.uint8).reshape(-1, part)
        return rows[:, :10].tobytes()
    return a.tobytes()

class Tagged(np.ndarray):
    """The cuDF bug class: state that __array_finalize__ sets, plus attributes set later."""
    def __array_finalize__(self, obj):
        self.tag = getattr(obj, 'tag', 'from-finalize')

class Point:
    """A non-array type written through a user-registered reducer."""
    def __init__(self, x, y):
        self.x, self.y = x, y

parity.reducers.register(Point, lambda p: {'x': p.x, 'y': p.y}, lambda s: Point(s['x'], s['y']))
parity.reducers.allow_module(__name__)

def _tagged():
    t = np.arange(4.0).view(Tagged)
    t.tag, t.extra = 'custom', {'k': np.arange(2, dtype='>i2'), 'nested': [1.5, None]}
    return t

def _memmap_path():
    """One file per writing process, inherited by the fresh process that re-reads its results (through the
    environment), so that two tests running at once never truncate the file the other has mapped (EFAULT). The
    writing process removes it when it is done (remove_memmap_file)."""
    path = os.environ.get('PARITY_CODEC_TEST_MEMMAP')
    if path is None:
        path = os.path.join(tempfile.gettempdir(), f'parity-codec-test-memmap-{os.getpid()}.dat')
        os.environ['PARITY_CODEC_TEST_MEMMAP'] = path
    return path

def remove_memmap_file():
    """Removes _memmap_path's file where this process made it (its pid in the name), never one it inherited from the
    process that made it. For the C++ processes that build the memmap case (codec_test.cc's MemmapCaseFile, the fuzz
    target's --write-seeds): their embedded interpreter is never finalized, so no atexit handler would run."""
    path = os.environ.get('PARITY_CODEC_TEST_MEMMAP')
    if path is not None and path.endswith(f'-{os.getpid()}.dat'):
        try:
            os.remove(path)
        except OSError:  # gone, or not ours to remove: a teardown must not abort a test binary whose tests passed
            pass

def _memmap():
    m = np.memmap(_memmap_path(), dtype='>f4', mode='w+', shape=(3, 4), offset=0)
    m[:] = np.arange(12).reshape(3, 4)
    return m

def _shared():
    x = np.arange(3.0)
    inner = [x, 'text']
    return {'a': x, 'b': x, 'lists': [inner, inner], 'view': x[::2]}

SUBCLASS_CASES = {
    'tagged_attributes': _tagged,
    'tagged_from_finalize_only': lambda: np.arange(3.0).view(Tagged),
    'masked': lambda: np.ma.MaskedArray(np.arange(6.0).reshape(2, 3), mask=[[0, 1, 0], [1, 0, 0]],
                                        fill_value=-1.5, hard_mask=True),
    'masked_nomask_int': lambda: np.ma.masked_array(np.arange(3)),
    'memmap': _memmap,
    'matrix': lambda: np.matrix([[1, 2], [3, 4]]),
    'recarray': lambda: np.rec.fromarrays([np.arange(3), np.array([1.5, 2.5, 3.5])], names='a,b'),
    'user_reducer': lambda: {'p': Point(1, np.arange(2.0)), 'points': [Point('a', None)]},
    'shared_references': _shared,
    'object_array': lambda: np.array([1, 'a', None, np.arange(2.0), {'k': 1.5}, 2 ** 70], dtype=object),
    'object_f_reversed': lambda: np.asfortranarray(np.array([[1, 'x', b'y'], [None, 2.5, -0.0]], dtype=object))[::-1],
    'object_readonly_broadcast': lambda: np.broadcast_to(np.array(['s'], dtype=object), (3, 2)),
    'object_0d_reduced': lambda: np.array(Point(1, 2), dtype=object),
    'object_empty': lambda: np.empty((0, 2), dtype=object),
    'strided_larger_than_staging': lambda: np.arange(3 << 20, dtype='>f4').reshape(-1, 3)[::-1, ::2],
    'overlapping_windows': lambda: np.lib.stride_tricks.sliding_window_view(np.arange(10.0), 3),
}
CASES.update(SUBCLASS_CASES)

# The file codec_test.cc's DamagedFile cases damage (in format 1: tests/format_v1/damaged_base.parity).
DAMAGED_BASE = lambda: {'a': np.arange(6.0).reshape(2, 3)[:, ::2], 's': 'text'}
# ... and the one whose type and reducer names it replaces (tests/format_v1/allow_list_base.parity).
ALLOW_LIST_BASE = lambda: {'t': np.arange(3.0).view(Tagged)}

def _state(a):
    """What a subclass adds, described without parity's reducers."""
    if isinstance(a, np.ma.MaskedArray):
        return {'mask': np.ma.getmaskarray(a).tobytes(), 'fill_value': a.fill_value, 'hardmask': a.hardmask}
    if isinstance(a, np.memmap):
        return {'filename': a.filename, 'offset': a.offset, 'mode': a.mode}
    if isinstance(a, np.recarray):
        return {'record': a.dtype.type}
    return {}

def _describe(a):
    plain = a.view(np.ndarray)
    return {'type': type(a), 'state': _state(a), 'dtype': a.dtype, 'descr': a.dtype.descr, 'str': a.dtype.str,
            'shape': a.shape,'type': type(a), 'dtype': a.dtype, 'descr': a.dtype.descr, 'str': a.dtype.str, 'shape': a.shape,
            'strides': a.strides, 'C': a.flags.c_contiguous, 'F': a.flags.f_contiguous,
            'writeable': a.flags.writeable, 'aligned': a.flags.aligned, 'misalign': a.ctypes.data % 16,
            'bytes': _value_bytes(plain)}

def same(expected, actual, path='outputs'):
    """Every difference between two output trees, as messages naming the path."""
    if type(expected) is not type(actual):
        return [f'{path}: type {type(expected).__name__} != {type(actual).__name__}']
    if isinstance(expected, np.ndarray) and expected.dtype == object:
        e, a = _describe(expected), _describe(actual)
        diffs = [f'{path}: {k} {e[k]!r} != {a[k]!r}' for k in e if k != 'bytes' and e[k] != a[k]]
        return diffs + [d for i in np.ndindex(expected.shape) for d in same(expected[i], actual[i], f'{path}{list(i)}')]
    if isinstance(expected, np.ndarray):
        e, a = _describe(expected), _describe(actual)
        diffs = [f'{path}: {k} {e[k]!r} != {a[k]!r}' for k in e if e[k] != a[k]]
        return diffs + same(vars(expected), vars(actual), path + '.__dict__') if type(expected) is Tagged else diffs
    if isinstance(expected, Point):
        return same(vars(expected), vars(actual), path + '.__dict__')
    if isinstance(expected, np.generic):
        e, a = np.asarray(expected), np.asarray(actual)
        return [] if (e.dtype.str, _value_bytes(e)) == (a.dtype.str, _value_bytes(a)) else [f'{path}: {expected!r} != {actual!r}']
    if isinstance(expected, dict):
        if list(expected) != list(actual):
            return [f'{path}: keys {list(expected)} != {list(actual)}']
        return [d for k in expected for d in same(expected[k], actual[k], f'{path}[{k!r}]')]
    if isinstance(expected, (list, tuple)):
        if len(expected) != len(actual):
            return [f'{path}: length {len(expected)} != {len(actual)}']
        return [d for i, (x, y) in enumerate(zip(expected, actual)) for d in same(x, y, f'{path}[{i}]')]
    if isinstance(expected, float):
        return [] if struct.pack('<d', expected) == struct.pack('<d', actual) else [f'{path}: {expected!r} != {actual!r}']
    if isinstance(expected, complex):
        return same(expected.real, actual.real, path + '.real') + same(expected.imag, actual.imag, path + '.imag')
    return [] if expected == actual else [f'{path}: {expected!r} != {actual!r}']
