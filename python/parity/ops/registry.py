"""The operation registry: one Op per NumPy operation (sample inputs, dtypes, kind, layouts, expected differences as
data), from which scenarios/ops.py generates `ops.<name>[layout=...,dtype=...]` scenarios (README, "Operation
registry"). A library registers entries for its own API with `register(Op(...))` the same way."""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable

import numpy

from parity.ops import layouts as _layouts

# Calls made from this module count as the corpus's own calls for `parity coverage` (parity.coverage).
__parity_corpus__ = True

KINDS = ("elementwise", "reduction", "linalg", "shape", "set", "sort", "search", "index", "fft", "random",
         "polynomial", "string", "datetime", "masked", "creation", "io", "statistics", "window", "dtype", "config")

SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INT = SIGNED + UNSIGNED
FLOAT = ("float16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
BOOL = ("bool",)
REAL = INT + FLOAT
NUMERIC = REAL + COMPLEX
ALL = BOOL + NUMERIC
F64 = ("float64",)
NONE = ("none",)  # the operation takes no array of a chosen dtype

MEMORY = _layouts.MEMORY_LAYOUTS
WITH_SHAPES = MEMORY + _layouts.SHAPE_LAYOUTS


@dataclass(frozen=True)
class Op:
    """One operation. `call(xp, *arrays, **kw)` runs it on the arrays `sample` made (in the scenario's layout);
    `out`/`in_place`: it takes out= (a fresh array, or its first input). `differences` maps a backend name to the
    scenario's xfail for it (`{"compare": {check: reason}}`), the registry's expected differences as data."""

    name: str
    kind: str
    call: Callable
    dtypes: tuple = F64
    layouts: tuple = MEMORY
    nargs: int = 1
    shape: tuple = (3, 4)
    domain: str = "any"
    sample: Callable | None = None  # (rng, dtype, shape) -> list of host arrays (and other arguments)
    out: bool = False
    in_place: bool = False
    masked: bool = False  # the first array becomes an xp.ma masked array with a fixed pattern of masked elements
    rtol: float | None = None
    differences: dict = field(default_factory=dict)
    needs: str = ""  # the NumPy name the call needs, where `name` is none (default: `name`)

    @property
    def scenario_name(self) -> str:
        """The function part of the scenario id: dots become underscores (linalg.solve -> linalg_solve)."""
        return self.name.replace(".", "_")

    def unavailable(self) -> str | None:
        """Why the installed NumPy cannot run this operation (it lacks the name the call needs), else None: NumPy
        removes names (2.5 has no row_stack), and an entry for one is skipped saying so, never an error."""
        needed = self.needs or self.name
        owner, parts = numpy, needed.split(".")
        if parts[0] == "random" and len(parts) == 2:  # the registry's random.<method> are Generator methods
            owner, parts = numpy.random.Generator, parts[1:]
        for part in parts:
            owner = getattr(owner, part, None)
            if owner is None:
                return f"NumPy {numpy.__version__} has no {needed}: the operation {self.name} cannot run on it"
        return None

    def variants(self) -> list:
        """Every (layout, dtype) this operation runs over, in a stable order."""
        wanted = self.layouts + (("out",) if self.out else ()) + (("in-place",) if self.in_place else ())
        return [(layout, dtype) for layout in wanted for dtype in self.dtypes if _layouts.applies(layout, dtype)]

    def inputs(self, xp, rng, layout: str, dtype: str) -> list:
        shape = _layouts.shape_for(layout, self.shape)
        host = (self.sample or _default_sample(self))(rng, dtype, shape)
        memory = "C" if layout in _layouts.CALL_LAYOUTS else layout
        arrays = [_layouts.make(xp, h, memory) for h in host]
        if self.masked:
            arrays[0] = xp.ma.masked_array(arrays[0], mask=_mask_of(host[0]))
        return arrays

    def run(self, xp, rng, layout: str, dtype: str):
        """The scenario's outputs: the result, and for out= variants the out array and whether it was returned."""
        arrays = self.inputs(xp, rng, layout, dtype)
        if layout == "in-place":
            returned = self.call(xp, *arrays, out=arrays[0])
            return {"result": arrays[0], "returned_input": returned is arrays[0]}
        if layout == "out":
            out = xp.zeros_like(self.call(xp, *arrays))
            returned = self.call(xp, *arrays, out=out)
            return {"result": out, "returned_out": returned is out}
        return {"result": self.call(xp, *arrays)}


REGISTRY: dict = {}


def register(op: Op) -> Op:
    """Adds `op`; a second entry of the same name is a mistake (ids must stay unique)."""
    if op.kind not in KINDS:
        raise ValueError(f"operation {op.name!r}: kind {op.kind!r} is not one of {', '.join(KINDS)}")
    if op.name in REGISTRY:
        raise ValueError(f"operation {op.name!r} is registered twice")
    REGISTRY[op.name] = op
    return op


def _mask_of(host):
    flat = numpy.zeros(host.size, dtype=bool)
    flat[::3] = True
    return flat.reshape(host.shape)


# --- sample data ---------------------------------------------------------------------------------------------


def data(rng, dtype, shape, domain="any"):
    """Host values of `dtype` and `shape` in `domain` (any, positive, unit, small, ge1, nonzero)."""
    dt = numpy.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) > 0.5
    if dt.kind in "iu":
        low, high = {"positive": (1, 9), "unit": (0, 2), "small": (0, 5), "ge1": (1, 9), "nonzero": (1, 9)}.get(
            domain, (-9 if dt.kind == "i" else 0, 10))
        return rng.integers(low, high, size=shape).astype(dt)
    if domain == "positive" or domain == "nonzero":
        values = rng.uniform(0.5, 4.0, size=shape)
    elif domain == "unit":
        values = rng.uniform(-0.9, 0.9, size=shape)
    elif domain == "ge1":
        values = rng.uniform(1.0, 4.0, size=shape)
    elif domain == "small":
        values = rng.uniform(0.0, 3.0, size=shape)
    else:
        values = rng.standard_normal(shape) * 3
    if dt.kind == "c":
        values = values + 1j * (rng.standard_normal(shape) if domain == "any" else rng.uniform(0.1, 0.9, shape))
    return numpy.asarray(values).astype(dt)


def _default_sample(op):
    return lambda rng, dtype, shape: [data(rng, dtype, shape, op.domain) for _ in range(op.nargs)]


def arrays(*shapes, domain="any", dtype=None):
    """A sample maker of arrays of fixed shapes (the layout's 0-d/empty shapes do not apply)."""
    return lambda rng, dt, shape: [data(rng, dtype or dt, s, domain) for s in shapes]


def sampled(ops=None, per_op: int = 2, seed: int = 21) -> list:
    """(op, layout, dtype) for the default corpus: `per_op` variants of each operation, drawn with a fixed seed, so
    that the corpus stays affordable and the same on every machine; the full product is `sampled(per_op=0)`."""
    chosen = []
    for op in (ops if ops is not None else REGISTRY.values()):
        variants = op.variants()
        if per_op and len(variants) > per_op:
            variants = random.Random(f"{seed}:{op.name}").sample(variants, per_op)
        chosen.extend((op, layout, dtype) for layout, dtype in variants)
    return chosen


# --- ufuncs, generically ------------------------------------------------------------------------------------------

_DOMAINS = {
    "log": "positive", "log2": "positive", "log10": "positive", "log1p": "positive", "sqrt": "positive",
    "arccos": "unit", "arcsin": "unit", "arctanh": "unit", "acos": "unit", "asin": "unit", "atanh": "unit",
    "arccosh": "ge1", "acosh": "ge1", "power": "small", "pow": "small", "float_power": "small",
    "left_shift": "small", "right_shift": "small", "bitwise_left_shift": "small", "bitwise_right_shift": "small",
    "gcd": "small", "lcm": "small", "reciprocal": "nonzero", "floor_divide": "nonzero", "divmod": "nonzero",
    "remainder": "nonzero", "mod": "nonzero", "fmod": "nonzero", "divide": "nonzero", "true_divide": "nonzero",
    "exp": "unit", "exp2": "unit", "expm1": "unit", "cosh": "unit", "sinh": "unit", "ldexp": "small",
}
_SPECIAL_UFUNCS = {"matmul", "vecdot", "matvec", "vecmat", "isnat", "ldexp"}


def _ufunc_dtypes(uf) -> tuple:
    """The candidate dtypes the ufunc has a loop for with every input and the first output of that dtype."""
    found = []
    for name in ALL:
        char = numpy.dtype(name).char
        if any(sig.split("->")[0] == char * uf.nin for sig in uf.types):
            found.append(name)
    return tuple(found)


def _same_type_out(uf, dtype) -> bool:
    char = numpy.dtype(dtype).char
    return all(sig == char * uf.nin + "->" + char * uf.nout for sig in [f"{char * uf.nin}->{char * uf.nout}"]) and \
        f"{char * uf.nin}->{char * uf.nout}" in uf.types


def _ufunc_op(name, uf):
    call = (lambda xp, *a, **kw: getattr(xp, name)(*a, **kw))
    dtypes = _ufunc_dtypes(uf)
    in_place_ok = uf.nout == 1 and all(_same_type_out(uf, d) for d in dtypes)
    return Op(name, "elementwise", call, dtypes=dtypes, layouts=WITH_SHAPES, nargs=uf.nin,
              domain=_DOMAINS.get(name, "any"), out=uf.nout == 1, in_place=in_place_ok)


def _unrecorded(value):
    # Under `parity coverage` numpy's names are recorders (parity.coverage) standing in for the real callables.
    return getattr(value, "_parity_wrapped", value)


for _name in sorted(n for n in dir(numpy) if isinstance(_unrecorded(getattr(numpy, n)), numpy.ufunc)
                    and not n.startswith("_")):
    if _name not in _SPECIAL_UFUNCS:
        register(_ufunc_op(_name, _unrecorded(getattr(numpy, _name))))

register(Op("matmul", "linalg", lambda xp, a, b, **kw: xp.matmul(a, b, **kw), dtypes=INT[:4] + FLOAT[1:] + COMPLEX,
            sample=arrays((3, 4), (4, 2)), out=True))
register(Op("vecdot", "linalg", lambda xp, a, b: xp.vecdot(a, b), dtypes=FLOAT[1:] + COMPLEX, nargs=2))
register(Op("matvec", "linalg", lambda xp, a, b: xp.matvec(a, b), dtypes=FLOAT[1:], sample=arrays((3, 4), (4,))))
register(Op("vecmat", "linalg", lambda xp, a, b: xp.vecmat(a, b), dtypes=FLOAT[1:], sample=arrays((3,), (3, 4))))
register(Op("ldexp", "elementwise", lambda xp, a, b, **kw: xp.ldexp(a, b, **kw), dtypes=FLOAT, out=True,
            sample=lambda rng, dt, shape: [data(rng, dt, shape), data(rng, "int32", shape, "small")]))
register(Op("isnat", "datetime", lambda xp, a: xp.isnat(a), dtypes=("datetime64[D]", "timedelta64[s]"),
            sample=lambda rng, dt, shape: [_dates(rng, dt, shape)], layouts=WITH_SHAPES))


def _dates(rng, dtype, shape):
    values = rng.integers(0, 20000, size=shape).astype(numpy.dtype(dtype))
    flat = values.reshape(-1)
    flat[::4] = numpy.datetime64("NaT") if values.dtype.kind == "M" else numpy.timedelta64("NaT")
    return values


# --- everything else, one line each ------------------------------------------------------------------------------


def _ops(kind, table, **defaults):
    """Registers {name: call} (or {name: (call, {overrides})}) of one kind."""
    for name, entry in table.items():
        call, extra = entry if isinstance(entry, tuple) else (entry, {})
        register(Op(name, kind, call, **{**defaults, **extra}))


def _vec(n=6, domain="any"):
    return arrays((n,), domain=domain)


def _with_nans(rng, dtype, shape):
    values = data(rng, dtype, shape)
    values[..., 1] = numpy.nan
    return values


# The sample of the nan* functions (and nan_to_num): a NaN column. Defined before the tables that use it.
_NAN_SAMPLE = {"sample": lambda rng, dtype, shape: [_with_nans(rng, dtype, shape)]}


_ops("reduction", {
    "sum": (lambda xp, a, **kw: xp.sum(a, axis=0, **kw), {"out": True, "dtypes": NUMERIC}),
    "prod": (lambda xp, a, **kw: xp.prod(a, axis=1, **kw), {"out": True, "dtypes": INT + F64}),
    "cumsum": (lambda xp, a, **kw: xp.cumsum(a, axis=0, **kw), {"out": True, "dtypes": NUMERIC}),
    "cumprod": (lambda xp, a, **kw: xp.cumprod(a, axis=1, **kw), {"out": True, "dtypes": INT + F64}),
    "cumulative_sum": (lambda xp, a: xp.cumulative_sum(a, axis=0, include_initial=True), {"dtypes": NUMERIC}),
    "cumulative_prod": (lambda xp, a: xp.cumulative_prod(a, axis=1), {"dtypes": INT + F64}),
    "mean": (lambda xp, a, **kw: xp.mean(a, axis=0, **kw), {"out": True, "dtypes": REAL}),
    "average": (lambda xp, a, w: xp.average(a, axis=1, weights=w), {"sample": arrays((3, 4), (4,), domain="positive")}),
    "std": (lambda xp, a: xp.std(a, axis=0, ddof=1), {"dtypes": FLOAT[1:]}),
    "var": (lambda xp, a: xp.var(a, axis=1), {"dtypes": FLOAT[1:] + COMPLEX}),
    "max": (lambda xp, a, **kw: xp.max(a, axis=0, **kw), {"out": True, "dtypes": REAL}),
    "min": (lambda xp, a, **kw: xp.min(a, axis=1, **kw), {"out": True, "dtypes": REAL}),
    "amax": (lambda xp, a: xp.amax(a, axis=0), {"dtypes": REAL}),
    "amin": (lambda xp, a: xp.amin(a), {"dtypes": REAL}),
    "ptp": (lambda xp, a: xp.ptp(a, axis=1), {"dtypes": SIGNED + FLOAT}),
    "all": (lambda xp, a, **kw: xp.all(a, axis=0, **kw), {"out": True, "dtypes": BOOL + INT[:2]}),
    "any": (lambda xp, a, **kw: xp.any(a, axis=1, **kw), {"out": True, "dtypes": BOOL + INT[:2]}),
    "argmax": (lambda xp, a: xp.argmax(a, axis=0), {"dtypes": REAL}),
    "argmin": (lambda xp, a: xp.argmin(a, axis=1), {"dtypes": REAL}),
    "count_nonzero": (lambda xp, a: xp.count_nonzero(a, axis=0), {"dtypes": ALL}),
    "trace": (lambda xp, a: xp.trace(a), {"dtypes": NUMERIC}),
    "median": (lambda xp, a: xp.median(a, axis=0), {"dtypes": REAL}),
    "percentile": (lambda xp, a: xp.percentile(a, [10, 50, 90], axis=1), {"dtypes": FLOAT[1:]}),
    "quantile": (lambda xp, a: xp.quantile(a, 0.3, axis=0, method="nearest"), {"dtypes": REAL}),
    "diff": (lambda xp, a: xp.diff(a, n=2, axis=1), {"dtypes": NUMERIC}),
    "ediff1d": (lambda xp, a: xp.ediff1d(a, to_begin=[0]), {"dtypes": SIGNED + F64}),
    "gradient": (lambda xp, a: xp.gradient(a, 0.5, axis=1), {"dtypes": F64 + ("float32",)}),
    "trapezoid": (lambda xp, a: xp.trapezoid(a, dx=0.5, axis=1), {"dtypes": F64}),
    "nansum": (lambda xp, a: xp.nansum(a, axis=0), _NAN_SAMPLE),
    "nanprod": (lambda xp, a: xp.nanprod(a, axis=1), _NAN_SAMPLE),
    "nanmean": (lambda xp, a: xp.nanmean(a, axis=0), _NAN_SAMPLE),
    "nanstd": (lambda xp, a: xp.nanstd(a, axis=1), _NAN_SAMPLE),
    "nanvar": (lambda xp, a: xp.nanvar(a, axis=0), _NAN_SAMPLE),
    "nanmax": (lambda xp, a: xp.nanmax(a, axis=1), _NAN_SAMPLE),
    "nanmin": (lambda xp, a: xp.nanmin(a, axis=0), _NAN_SAMPLE),
    "nanargmax": (lambda xp, a: xp.nanargmax(a, axis=1), _NAN_SAMPLE),
    "nanargmin": (lambda xp, a: xp.nanargmin(a, axis=1), _NAN_SAMPLE),
    "nancumsum": (lambda xp, a: xp.nancumsum(a, axis=0), _NAN_SAMPLE),
    "nancumprod": (lambda xp, a: xp.nancumprod(a, axis=1), _NAN_SAMPLE),
    "nanmedian": (lambda xp, a: xp.nanmedian(a, axis=0), _NAN_SAMPLE),
    "nanpercentile": (lambda xp, a: xp.nanpercentile(a, 40, axis=1), _NAN_SAMPLE),
    "nanquantile": (lambda xp, a: xp.nanquantile(a, [0.2, 0.7], axis=0), _NAN_SAMPLE),
}, dtypes=F64)


_ops("statistics", {
    "histogram": lambda xp, a: xp.histogram(a, bins=5),
    "histogram_bin_edges": lambda xp, a: xp.histogram_bin_edges(a, bins="auto"),
    "histogram2d": (lambda xp, a, b: xp.histogram2d(a, b, bins=3), {"sample": arrays((12,), (12,))}),
    "histogramdd": (lambda xp, a: xp.histogramdd(a, bins=(2, 3)), {"sample": arrays((10, 2))}),
    "bincount": (lambda xp, a: xp.bincount(a, minlength=12), {"dtypes": ("int64", "uint8", "int32"),
                                                               "sample": _vec(10, "positive")}),
    "digitize": (lambda xp, a: xp.digitize(a, xp.asarray([-2.0, 0.0, 1.5, 4.0]))),
    "cov": (lambda xp, a: xp.cov(a), {"dtypes": F64 + ("float32", "int64")}),
    "corrcoef": (lambda xp, a: xp.corrcoef(a), {"dtypes": F64 + ("float32",)}),
    "correlate": (lambda xp, a, b: xp.correlate(a, b, mode="full"), {"sample": arrays((7,), (3,))}),
    "convolve": (lambda xp, a, b: xp.convolve(a, b, mode="same"), {"sample": arrays((7,), (3,)),
                                                                   "dtypes": F64 + ("int32", "complex128")}),
    "interp": (lambda xp, x: xp.interp(x, xp.asarray([-3.0, 0.0, 2.0, 5.0]), xp.asarray([1.0, 0.0, 4.0, 2.0]))),
    "unwrap": (lambda xp, a: xp.unwrap(a * 3, axis=1)),
    "clip": (lambda xp, a, **kw: xp.clip(a, -1, 2, **kw), {"dtypes": REAL, "out": True, "in_place": True,
                                                           "layouts": WITH_SHAPES}),
    "round": (lambda xp, a, **kw: xp.round(a, 1, **kw), {"dtypes": FLOAT + SIGNED, "out": True}),
    "around": (lambda xp, a: xp.around(a, 2), {"dtypes": FLOAT}),
    "fix": (lambda xp, a: xp.fix(a), {"dtypes": FLOAT, "layouts": WITH_SHAPES}),
    "nan_to_num": (lambda xp, a: xp.nan_to_num(a, nan=-1.0, posinf=9.0), _NAN_SAMPLE),
    "sinc": (lambda xp, a: xp.sinc(a), {"layouts": WITH_SHAPES}),
    "i0": lambda xp, a: xp.i0(a),
    "angle": (lambda xp, a: xp.angle(a, deg=True), {"dtypes": COMPLEX + F64}),
    "real": (lambda xp, a: xp.real(a), {"dtypes": COMPLEX + F64}),
    "imag": (lambda xp, a: xp.imag(a), {"dtypes": COMPLEX}),
    "real_if_close": (lambda xp, a: xp.real_if_close(a), {"dtypes": COMPLEX}),
    "isclose": (lambda xp, a, b: xp.isclose(a, b, atol=0.5), {"nargs": 2, "dtypes": FLOAT[1:]}),
    "allclose": (lambda xp, a, b: xp.allclose(a, a + 1e-12), {"nargs": 2}),
    "array_equal": (lambda xp, a, b: [xp.array_equal(a, b), xp.array_equal(a, a)], {"nargs": 2, "dtypes": ALL}),
    "array_equiv": (lambda xp, a, b: xp.array_equiv(a, a[:1]), {"nargs": 2}),
    "iscomplex": (lambda xp, a: xp.iscomplex(a), {"dtypes": COMPLEX + F64}),
    "isreal": (lambda xp, a: xp.isreal(a), {"dtypes": COMPLEX + F64}),
    "iscomplexobj": (lambda xp, a: xp.iscomplexobj(a), {"dtypes": COMPLEX + F64}),
    "isrealobj": (lambda xp, a: xp.isrealobj(a), {"dtypes": COMPLEX + F64}),
    "isneginf": (lambda xp, a: xp.isneginf(a / 0.0 if False else a), {"dtypes": FLOAT}),
    "isposinf": (lambda xp, a: xp.isposinf(a), {"dtypes": FLOAT}),
    "sort_complex": (lambda xp, a: xp.sort_complex(a), {"dtypes": COMPLEX + F64, "sample": _vec(8)}),
    "dot": (lambda xp, a, b, **kw: xp.dot(a, b, **kw), {"sample": arrays((3, 4), (4, 2)), "out": True,
                                                        "dtypes": F64 + ("int32", "complex128")}),
    "vdot": (lambda xp, a, b: xp.vdot(a, b), {"nargs": 2, "dtypes": F64 + COMPLEX}),
    "inner": (lambda xp, a, b: xp.inner(a, b), {"nargs": 2}),
    "outer": (lambda xp, a, b: xp.outer(a, b), {"sample": arrays((3,), (4,))}),
    "tensordot": (lambda xp, a, b: xp.tensordot(a, b, axes=([1], [0])), {"sample": arrays((3, 4), (4, 2))}),
    "kron": (lambda xp, a, b: xp.kron(a, b), {"sample": arrays((2, 3), (2, 2)), "dtypes": F64 + ("int16",)}),
    "einsum": (lambda xp, a, b: xp.einsum("ij,jk->ik", a, b), {"sample": arrays((3, 4), (4, 2))}),
    "einsum_path": (lambda xp, a, b: str(xp.einsum_path("ij,jk->ik", a, b, optimize="greedy")[0]),
                    {"sample": arrays((3, 4), (4, 2))}),
    "cross": (lambda xp, a, b: xp.cross(a, b), {"sample": arrays((4, 3), (4, 3)), "dtypes": F64 + ("int32",)}),
}, dtypes=F64)

_ops("window", {
    "bartlett": lambda xp: xp.bartlett(7), "blackman": lambda xp: xp.blackman(6), "hamming": lambda xp: xp.hamming(5),
    "hanning": lambda xp: xp.hanning(8), "kaiser": lambda xp: xp.kaiser(6, 5.0),
}, dtypes=NONE, layouts=("C",), sample=lambda rng, dt, shape: [])

_ops("creation", {
    "arange": lambda xp: [xp.arange(7), xp.arange(1.0, 2.0, 0.25), xp.arange(10, 0, -3, dtype=xp.int8)],
    "linspace": lambda xp: xp.linspace(0, 1, 7, endpoint=False, retstep=True),
    "logspace": lambda xp: xp.logspace(0, 2, 5, base=3.0),
    "geomspace": lambda xp: xp.geomspace(1, 256, 9),
    "eye": lambda xp: xp.eye(3, 4, k=1, dtype=xp.int16, order="F"),
    "identity": lambda xp: xp.identity(3),
    "tri": lambda xp: xp.tri(3, 4, -1),
    "zeros": lambda xp: xp.zeros((2, 3), dtype=">i4", order="F"),
    "ones": lambda xp: xp.ones((3, 2), dtype=xp.complex64),
    "full": lambda xp: xp.full((2, 2), 7.5, dtype=xp.float32),
    "empty": lambda xp: xp.empty((0, 3)),
    "indices": lambda xp: xp.indices((2, 3)),
    "fromfunction": lambda xp: xp.fromfunction(lambda i, j: i * 10 + j, (3, 4), dtype=int),
    "fromiter": lambda xp: xp.fromiter((i * i for i in range(6)), dtype=xp.int32),
    "frombuffer": lambda xp: xp.frombuffer(bytes(range(16)), dtype="<u2", offset=2),
    "fromstring": lambda xp: xp.fromstring("1 2 3 4", dtype=int, sep=" "),
    "diag_indices": lambda xp: xp.diag_indices(3, ndim=2),
    "tril_indices": lambda xp: xp.tril_indices(4, k=-1),
    "triu_indices": lambda xp: xp.triu_indices(3, k=1, m=4),
    "mask_indices": lambda xp: xp.mask_indices(3, xp.triu),
    "meshgrid": lambda xp: xp.meshgrid(xp.arange(3), xp.arange(2.0), indexing="ij"),
    "vander": lambda xp: xp.vander(xp.asarray([1, 2, 3]), 4, increasing=True),
    "bmat": lambda xp: xp.asarray(xp.bmat([[xp.eye(2), xp.zeros((2, 1))]])),
    "asmatrix": lambda xp: xp.asarray(xp.asmatrix([[1, 2], [3, 4]]) * 2),
    "array": lambda xp: xp.array([[1, 2], [3, 4]], dtype=xp.float32, order="F"),
    "copy": lambda xp: xp.copy(xp.arange(6).reshape(2, 3)[:, ::2], order="K"),
    "from_dlpack": lambda xp: xp.from_dlpack(xp.arange(5.0)),
    "block": lambda xp: xp.block([[xp.ones((2, 2)), xp.zeros((2, 1))], [xp.full((1, 3), 5.0)]]),
    "frompyfunc": lambda xp: xp.frompyfunc(lambda a, b: a * 2 + b, 2, 1)(xp.arange(4), 1).astype(int),
    "piecewise": lambda xp: xp.piecewise(xp.linspace(-2, 2, 9), [xp.linspace(-2, 2, 9) < 0], [-1.0, lambda v: v ** 2]),
    "select": lambda xp: xp.select([xp.arange(6) < 2, xp.arange(6) > 4], [xp.arange(6), -xp.arange(6)], default=9),
    "apply_along_axis": lambda xp: xp.apply_along_axis(lambda r: r.max() - r.min(), 1, xp.arange(12.0).reshape(3, 4) ** 2),
    "apply_over_axes": lambda xp: xp.apply_over_axes(xp.sum, xp.arange(24).reshape(2, 3, 4), [0, 2]),
}, dtypes=NONE, layouts=("C",), sample=lambda rng, dt, shape: [])

_ops("creation", {
    "zeros_like": (lambda xp, a: xp.zeros_like(a)), "ones_like": (lambda xp, a: xp.ones_like(a, order="K")),
    "full_like": (lambda xp, a: xp.full_like(a, 3)),
    "empty_like": (lambda xp, a: xp.empty_like(a).shape),
    "asarray": lambda xp, a: xp.asarray(a), "asanyarray": lambda xp, a: xp.asanyarray(a),
    "ascontiguousarray": lambda xp, a: xp.ascontiguousarray(a), "asfortranarray": lambda xp, a: xp.asfortranarray(a),
    "asarray_chkfinite": lambda xp, a: xp.asarray_chkfinite(a),
    "require": lambda xp, a: xp.require(a, requirements=["F", "W"]),
    "astype": lambda xp, a: xp.astype(a, xp.float32),
    "diagflat": (lambda xp, a: xp.diagflat(a, k=1), {"sample": _vec(4)}),
    "diag": lambda xp, a: [xp.diag(a, k=1), xp.diag(xp.diag(a))],
    "tril": lambda xp, a: xp.tril(a, k=1), "triu": lambda xp, a: xp.triu(a, k=-1),
    "tril_indices_from": lambda xp, a: xp.tril_indices_from(a),
    "triu_indices_from": lambda xp, a: xp.triu_indices_from(a, k=1),
    "diag_indices_from": (lambda xp, a: xp.diag_indices_from(a), {"shape": (3, 3)}),
    "copyto": (lambda xp, a: _copyto(xp, a)),
    "fill_diagonal": (lambda xp, a: _fill_diagonal(xp, a)),
}, dtypes=F64 + ("int16", "complex64"), layouts=MEMORY)


def _copyto(xp, a):
    dst = xp.zeros(a.shape, dtype=xp.float64)
    xp.copyto(dst, a, casting="unsafe", where=dst == 0)
    return dst


def _fill_diagonal(xp, a):
    b = xp.array(a)
    xp.fill_diagonal(b, 5, wrap=True)
    return b


_ops("shape", {
    "reshape": lambda xp, a: xp.reshape(a, (4, 3), order="F"),
    "ravel": lambda xp, a: xp.ravel(a, order="K"),
    "transpose": lambda xp, a: xp.transpose(a),
    "matrix_transpose": lambda xp, a: xp.matrix_transpose(a),
    "permute_dims": lambda xp, a: xp.permute_dims(a, (1, 0)),
    "swapaxes": lambda xp, a: xp.swapaxes(a, 0, 1),
    "moveaxis": lambda xp, a: xp.moveaxis(a, 0, -1),
    "rollaxis": lambda xp, a: xp.rollaxis(a, 1),
    "expand_dims": lambda xp, a: xp.expand_dims(a, (0, 2)),
    "squeeze": lambda xp, a: xp.squeeze(a[:1]),
    "atleast_1d": lambda xp, a: xp.atleast_1d(a), "atleast_2d": lambda xp, a: xp.atleast_2d(a[0]),
    "atleast_3d": lambda xp, a: xp.atleast_3d(a),
    "broadcast_to": lambda xp, a: xp.broadcast_to(a, (2, 3, 4)),
    "broadcast_arrays": lambda xp, a: xp.broadcast_arrays(a, a[:1]),
    "flip": lambda xp, a: xp.flip(a, axis=1), "fliplr": lambda xp, a: xp.fliplr(a), "flipud": lambda xp, a: xp.flipud(a),
    "rot90": lambda xp, a: xp.rot90(a, k=3),
    "roll": lambda xp, a: xp.roll(a, 5),
    "tile": lambda xp, a: xp.tile(a, (2, 1)),
    "repeat": lambda xp, a: xp.repeat(a, 2, axis=0),
    "resize": lambda xp, a: xp.resize(a, (5, 3)),
    "pad": lambda xp, a: [xp.pad(a, 1, mode="reflect"), xp.pad(a, ((0, 1), (2, 0)), constant_values=7)],
    "concatenate": lambda xp, a: xp.concatenate([a, a[:1]], axis=0),
    "concat": lambda xp, a: xp.concat([a, a], axis=1),
    "stack": lambda xp, a: xp.stack([a, a], axis=1),
    "unstack": lambda xp, a: xp.unstack(a, axis=1),
    "hstack": lambda xp, a: xp.hstack([a, a]), "vstack": lambda xp, a: xp.vstack([a, a[0]]),
    "dstack": lambda xp, a: xp.dstack([a, a]), "column_stack": lambda xp, a: xp.column_stack([a[0], a[1]]),
    "row_stack": lambda xp, a: _deprecated(lambda: xp.row_stack([a[0], a[1]])),
    "split": lambda xp, a: xp.split(a, 2, axis=1), "array_split": lambda xp, a: xp.array_split(a, 3, axis=1),
    "hsplit": lambda xp, a: xp.hsplit(a, [1]), "vsplit": lambda xp, a: xp.vsplit(a, [2]),
    "dsplit": lambda xp, a: xp.dsplit(xp.atleast_3d(a), 1),
    "append": lambda xp, a: xp.append(a, a[:1], axis=0),
    "insert": lambda xp, a: xp.insert(a, 1, 9, axis=1),
    "delete": lambda xp, a: xp.delete(a, [0, 2], axis=1),
    "trim_zeros": (lambda xp, a: xp.trim_zeros(a), {"sample": lambda r, d, s: [numpy.r_[0, 0, data(r, d, (5,), "positive"), 0].astype(d)]}),
    "diagonal": lambda xp, a: xp.diagonal(a, offset=1),
    "ndim": lambda xp, a: xp.ndim(a), "shape": lambda xp, a: xp.shape(a), "size": lambda xp, a: xp.size(a, axis=1),
    "isfortran": lambda xp, a: xp.isfortran(a),
    "may_share_memory": lambda xp, a: xp.may_share_memory(a, a[1:]),
    "shares_memory": lambda xp, a: xp.shares_memory(a, a[:, 1]),
    "packbits": (lambda xp, a: xp.packbits(a, axis=1), {"dtypes": BOOL + ("uint8",)}),
    "unpackbits": (lambda xp, a: xp.unpackbits(a, axis=0, count=10), {"dtypes": ("uint8",)}),
}, dtypes=F64 + ("int8", "complex128"), layouts=MEMORY)


_ops("index", {
    "take": lambda xp, a: xp.take(a, [2, 0, 1], axis=1, mode="clip"),
    "take_along_axis": lambda xp, a: xp.take_along_axis(a, xp.argsort(a, axis=1), axis=1),
    "put_along_axis": lambda xp, a: _mutated(xp, a, lambda b: xp.put_along_axis(b, xp.asarray([[0], [1], [2]]), 9, 1)),
    "put": lambda xp, a: _mutated(xp, a, lambda b: xp.put(b, [0, 5, -1], [7, 8, 9])),
    "place": lambda xp, a: _mutated(xp, a, lambda b: xp.place(b, b > 0, [1, 2])),
    "putmask": lambda xp, a: _mutated(xp, a, lambda b: xp.putmask(b, b < 0, -b)),
    "choose": lambda xp, a: xp.choose(xp.asarray([[0, 1, 0, 1]] * 3), [a, -a]),
    "compress": lambda xp, a: xp.compress([True, False, True], a, axis=0),
    "extract": lambda xp, a: xp.extract(a > 0, a),
    "where": lambda xp, a: [xp.where(a > 0, a, 0), xp.where(a > 1)],
    "nonzero": lambda xp, a: xp.nonzero(a > 0),
    "argwhere": lambda xp, a: xp.argwhere(a > 0),
    "flatnonzero": lambda xp, a: xp.flatnonzero(a > 0),
    "ravel_multi_index": lambda xp, a: xp.ravel_multi_index((xp.asarray([0, 2]), xp.asarray([3, 1])), a.shape),
    "unravel_index": lambda xp, a: xp.unravel_index(xp.asarray([1, 7, 11]), a.shape, order="F"),
    "ix_": lambda xp, a: a[xp.ix_([0, 2], [1, 3])],
}, dtypes=F64 + ("int32",), layouts=MEMORY)


def _deprecated(call):
    """`call()` with its DeprecationWarning silenced: the function is still public, and still to be covered."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return call()


def _mutated(xp, a, fill):
    b = xp.array(a)
    fill(b)
    return b


_ops("dtype", {
    "can_cast": lambda xp: [xp.can_cast(xp.int16, xp.float32), xp.can_cast(xp.float64, "i4", "same_kind")],
    "promote_types": lambda xp: str(xp.promote_types("i2", "u4")),
    "result_type": lambda xp: str(xp.result_type(xp.int8, xp.float16, 3.0)),
    "min_scalar_type": lambda xp: str(xp.min_scalar_type(-300)),
    "mintypecode": lambda xp: xp.mintypecode(["d", "f", "S"]),
    "common_type": lambda xp: str(xp.common_type(xp.ones(2, "f4"), xp.ones(2, "i2"))),
    "isdtype": lambda xp: [xp.isdtype(xp.float32, "real floating"), xp.isdtype(xp.int8, ("bool", "integral"))],
    "issubdtype": lambda xp: [xp.issubdtype(xp.float32, xp.floating), xp.issubdtype("i8", xp.unsignedinteger)],
    "typename": lambda xp: xp.typename("D"),
    "isscalar": lambda xp: [xp.isscalar(3.0), xp.isscalar(xp.ones(1)), xp.isscalar(xp.float32(1))],
    "iterable": lambda xp: [xp.iterable([1]), xp.iterable(2)],
    "broadcast_shapes": lambda xp: xp.broadcast_shapes((3, 1), (1, 4), (4,)),
    "nested_iters": lambda xp: [[int(v) for v in j] for i, j in [xp.nested_iters(xp.arange(6).reshape(2, 3),
                                                                                  [[0], [1]])] for _ in i],
}, dtypes=NONE, layouts=("C",), sample=lambda rng, dt, shape: [])

_ops("config", {
    "printoptions": lambda xp: _printed(xp),
    "get_printoptions": lambda xp: xp.get_printoptions()["precision"],
    "set_printoptions": lambda xp: _restored(xp.get_printoptions, lambda o: xp.set_printoptions(**o),
                                             lambda: xp.set_printoptions(precision=3),
                                             lambda: xp.array_repr(xp.ones(2) / 3)),
    "getbufsize": lambda xp: xp.getbufsize(),
    "setbufsize": lambda xp: _restored(xp.getbufsize, xp.setbufsize, lambda: xp.setbufsize(16384),
                                       lambda: xp.getbufsize()),
    "geterr": lambda xp: sorted(xp.geterr().items()),
    "seterr": lambda xp: _restored(xp.geterr, lambda o: xp.seterr(**o), lambda: xp.seterr(divide="ignore"),
                                   lambda: xp.geterr()["divide"]),
    "geterrcall": lambda xp: xp.geterrcall() is None,
    "seterrcall": lambda xp: _restored(xp.geterrcall, xp.seterrcall, lambda: xp.seterrcall(print),
                                       lambda: xp.geterrcall() is print),
}, dtypes=NONE, layouts=("C",), sample=lambda rng, dt, shape: [])


def _printed(xp):
    with xp.printoptions(precision=2, suppress=True):
        return xp.array_repr(xp.arange(3) / 7)


def _restored(get, put, change, observe):
    """observe() after change(), with the setting put back as get() found it."""
    saved = get()
    try:
        change()
        return observe()
    finally:
        put(saved)


_ops("sort", {
    "sort": lambda xp, a: xp.sort(a, axis=1, kind="stable"),
    "argsort": lambda xp, a: xp.argsort(a, axis=0, kind="stable"),
    "lexsort": lambda xp, a: xp.lexsort(a.T),
    "partition": lambda xp, a: xp.sort(xp.partition(a, 2, axis=1), axis=1),
    "argpartition": lambda xp, a: xp.take_along_axis(a, xp.argpartition(a, 1, axis=1), axis=1)[:, 1],
}, dtypes=REAL, layouts=WITH_SHAPES[:-2] + ("empty",))

_ops("search", {
    "searchsorted": (lambda xp, a: xp.searchsorted(xp.sort(a.ravel()), a[0], side="right")),
    "count_nonzero_axis": (lambda xp, a: xp.count_nonzero(a > 0, axis=1, keepdims=True), {"needs": "count_nonzero"}),
}, dtypes=REAL)

_ops("set", {
    "unique": lambda xp, a: xp.unique(a, return_index=True, return_inverse=True, return_counts=True),
    "unique_all": lambda xp, a: tuple(xp.unique_all(a)),
    "unique_counts": lambda xp, a: tuple(xp.unique_counts(a)),
    "unique_inverse": lambda xp, a: tuple(xp.unique_inverse(a)),
    "unique_values": lambda xp, a: xp.unique_values(a),
    "intersect1d": lambda xp, a: xp.intersect1d(a[0], a[1], return_indices=True),
    "union1d": lambda xp, a: xp.union1d(a[0], a[2]),
    "setdiff1d": lambda xp, a: xp.setdiff1d(a[0], a[1]),
    "setxor1d": lambda xp, a: xp.setxor1d(a[1], a[2]),
    "isin": lambda xp, a: xp.isin(a, a[0], invert=True),
}, dtypes=INT[:4] + F64, domain="small", layouts=MEMORY)

_SQUARE = dict(shape=(3, 3), sample=lambda rng, dt, shape: [_spd(rng, dt, shape)])


def _spd(rng, dtype, shape):
    """A well-conditioned symmetric positive definite matrix (every linalg routine applies to it)."""
    m = data(rng, dtype, shape)
    return (m @ m.conj().T + numpy.eye(shape[-1]) * shape[-1] * 4).astype(dtype) if shape else m


_ops("linalg", {
    "linalg.solve": (lambda xp, a: xp.linalg.solve(a, xp.ones(a.shape[0], dtype=a.dtype))),
    "linalg.inv": lambda xp, a: xp.linalg.inv(a),
    "linalg.det": lambda xp, a: xp.linalg.det(a),
    "linalg.slogdet": lambda xp, a: tuple(xp.linalg.slogdet(a)),
    "linalg.cholesky": lambda xp, a: xp.linalg.cholesky(a),
    "linalg.qr": lambda xp, a: xp.abs(xp.linalg.qr(a).R),
    "linalg.eigh": lambda xp, a: xp.linalg.eigh(a).eigenvalues,
    "linalg.eigvalsh": lambda xp, a: xp.linalg.eigvalsh(a),
    "linalg.eig": lambda xp, a: xp.sort(xp.linalg.eig(a).eigenvalues.real),
    "linalg.eigvals": lambda xp, a: xp.sort(xp.linalg.eigvals(a).real),
    "linalg.svd": lambda xp, a: xp.linalg.svd(a, compute_uv=False),
    "linalg.svdvals": lambda xp, a: xp.linalg.svdvals(a),
    "linalg.pinv": lambda xp, a: xp.linalg.pinv(a),
    "linalg.lstsq": lambda xp, a: xp.linalg.lstsq(a, xp.ones(a.shape[0], dtype=a.dtype), rcond=None)[0],
    "linalg.matrix_rank": lambda xp, a: xp.linalg.matrix_rank(a),
    "linalg.matrix_power": lambda xp, a: xp.linalg.matrix_power(a, 3),
    "linalg.cond": lambda xp, a: xp.linalg.cond(a, "fro"),
    "linalg.norm": lambda xp, a: [xp.linalg.norm(a), xp.linalg.norm(a, 1, axis=0), xp.linalg.norm(a, "nuc")],
    "linalg.matrix_norm": lambda xp, a: xp.linalg.matrix_norm(a, ord="fro"),
    "linalg.vector_norm": lambda xp, a: xp.linalg.vector_norm(a, ord=3, axis=1),
    "linalg.multi_dot": lambda xp, a: xp.linalg.multi_dot([a, a.T, a]),
    "linalg.matmul": lambda xp, a: xp.linalg.matmul(a, a),
    "linalg.outer": lambda xp, a: xp.linalg.outer(a[0], a[1]),
    "linalg.cross": lambda xp, a: xp.linalg.cross(a, a[::-1]),
    "linalg.diagonal": lambda xp, a: xp.linalg.diagonal(a, offset=1),
    "linalg.trace": lambda xp, a: xp.linalg.trace(a),
    "linalg.matrix_transpose": lambda xp, a: xp.linalg.matrix_transpose(a),
    "linalg.tensordot": lambda xp, a: xp.linalg.tensordot(a, a, axes=1),
    "linalg.vecdot": lambda xp, a: xp.linalg.vecdot(a, a),
    "linalg.tensorinv": lambda xp, a: xp.linalg.tensorinv(a, ind=1),
    "linalg.tensorsolve": lambda xp, a: xp.linalg.tensorsolve(a, xp.ones(3, dtype=a.dtype)),
}, dtypes=("float64", "float32", "complex128"), layouts=MEMORY[:-1], rtol=1e-5, **_SQUARE)

_ops("fft", {
    "fft.fft": lambda xp, a: xp.fft.fft(a, axis=1), "fft.ifft": lambda xp, a: xp.fft.ifft(a, n=6),
    "fft.fft2": lambda xp, a: xp.fft.fft2(a), "fft.ifft2": lambda xp, a: xp.fft.ifft2(a, norm="ortho"),
    "fft.fftn": lambda xp, a: xp.fft.fftn(a, axes=(0,)), "fft.ifftn": lambda xp, a: xp.fft.ifftn(a),
    "fft.rfft": lambda xp, a: xp.fft.rfft(a.real), "fft.irfft": lambda xp, a: xp.fft.irfft(a, n=6),
    "fft.rfft2": lambda xp, a: xp.fft.rfft2(a.real), "fft.irfft2": lambda xp, a: xp.fft.irfft2(a),
    "fft.rfftn": lambda xp, a: xp.fft.rfftn(a.real, norm="forward"), "fft.irfftn": lambda xp, a: xp.fft.irfftn(a),
    "fft.hfft": lambda xp, a: xp.fft.hfft(a, axis=0), "fft.ihfft": lambda xp, a: xp.fft.ihfft(a.real),
    "fft.fftshift": lambda xp, a: xp.fft.fftshift(a, axes=1), "fft.ifftshift": lambda xp, a: xp.fft.ifftshift(a),
    "fft.fftfreq": lambda xp, a: xp.fft.fftfreq(a.shape[1], d=0.1),
    "fft.rfftfreq": lambda xp, a: xp.fft.rfftfreq(7, d=2.0),
}, dtypes=("float64", "float32", "complex128", "complex64"), layouts=MEMORY, rtol=1e-5)

_ops("polynomial", {
    "poly": lambda xp, a: xp.poly(a[0]),
    "polyadd": lambda xp, a: xp.polyadd(a[0], a[1]), "polysub": lambda xp, a: xp.polysub(a[0], a[1, :2]),
    "polymul": lambda xp, a: xp.polymul(a[0], a[1]), "polydiv": lambda xp, a: xp.polydiv(a[0], a[1, :2] + 5),
    "polyder": lambda xp, a: xp.polyder(a[0], 2), "polyint": lambda xp, a: xp.polyint(a[0], k=1),
    "polyval": lambda xp, a: xp.polyval(a[0], a[1]), "roots": lambda xp, a: xp.sort(xp.abs(xp.roots(a[0]))),
    "polyfit": lambda xp, a: xp.polyfit(xp.arange(4.0), a[0], 2),
}, dtypes=F64, layouts=MEMORY, rtol=1e-6)

# fsproxy proxies what a call returns; numpy.load of an .npz returns an NpzFile, whose arrays it reads later, plain.
_NPZ = {"differences": {"fsproxy": {"compare": {
    "type": "numpy.load of an .npz returns an NpzFile (not an array, so not proxied) whose items are plain ndarrays"}}}}

_ops("io", {
    "save": lambda xp, a: _roundtrip(lambda f: xp.save(f, a), lambda f: xp.load(f)),
    "load": lambda xp, a: _roundtrip(lambda f: xp.save(f, a, allow_pickle=False), lambda f: xp.load(f)),
    "savez": (lambda xp, a: _roundtrip(lambda f: xp.savez(f, x=a), lambda f: xp.load(f)["x"]), _NPZ),
    "savez_compressed": (lambda xp, a: _roundtrip(lambda f: xp.savez_compressed(f, x=a), lambda f: xp.load(f)["x"]),
                         _NPZ),
    "savetxt": lambda xp, a: _text_roundtrip(lambda f: xp.savetxt(f, a, fmt="%.6g"), lambda f: xp.loadtxt(f)),
    "loadtxt": lambda xp, a: _text_roundtrip(lambda f: xp.savetxt(f, a), lambda f: xp.loadtxt(f, ndmin=2)),
    "genfromtxt": lambda xp, a: _text_roundtrip(lambda f: xp.savetxt(f, a, delimiter=","),
                                                lambda f: xp.genfromtxt(f, delimiter=",")),
    "fromregex": lambda xp, a: _text_roundtrip(lambda f: f.write("1 2\n3 4\n"),
                                               lambda f: xp.fromregex(f, r"(\d+) (\d+)", [("a", "i8"), ("b", "i8")])),
    "fromfile": lambda xp, a: _file_roundtrip(xp, a),
    "array2string": lambda xp, a: xp.array2string(a, precision=3, separator=","),
    "array_repr": lambda xp, a: xp.array_repr(a, precision=2),
    "array_str": lambda xp, a: xp.array_str(a, precision=2),
    "format_float_positional": lambda xp, a: xp.format_float_positional(a.ravel()[0], precision=4),
    "format_float_scientific": lambda xp, a: xp.format_float_scientific(a.ravel()[0], precision=4),
    "base_repr": lambda xp, a: xp.base_repr(37, base=5, padding=2),
    "binary_repr": lambda xp, a: xp.binary_repr(-5, width=8),
}, dtypes=F64, layouts=("C", "F", "negative", "big-endian"))


def _roundtrip(write, read):
    import io

    buffer = io.BytesIO()
    write(buffer)
    buffer.seek(0)
    return read(buffer)


def _text_roundtrip(write, read):
    import io

    buffer = io.StringIO()
    write(buffer)
    buffer.seek(0)
    return read(buffer)


def _file_roundtrip(xp, a):
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "a.bin")
        xp.asarray(a).tofile(path)
        return xp.fromfile(path, dtype=a.dtype)


_ops("datetime", {
    "busday_count": lambda xp: xp.busday_count(xp.asarray(["2024-01-01", "2024-03-01"], dtype="datetime64[D]"),
                                               "2024-06-30"),
    "busday_offset": lambda xp: xp.busday_offset("2024-01-05", [1, 5, -3], roll="forward"),
    "is_busday": lambda xp: xp.is_busday(xp.arange("2024-01-01", "2024-01-15", dtype="datetime64[D]")),
    "datetime_as_string": lambda xp: xp.datetime_as_string(xp.asarray(["2024-02-29T12:30"], dtype="M8[m]"),
                                                           unit="h"),
    "datetime_data": lambda xp: list(xp.datetime_data(xp.dtype("M8[25s]"))),
}, dtypes=NONE, layouts=("C",), sample=lambda rng, dt, shape: [])

_ops("datetime", {
    "datetime_arithmetic": (lambda xp, a: [a + xp.timedelta64(3, "D"), xp.diff(a), a.astype("M8[M]")],
                            {"needs": "timedelta64"}),
}, dtypes=("datetime64[D]", "datetime64[s]"), layouts=MEMORY, shape=(8,),
    sample=lambda rng, dt, shape: [rng.integers(0, 30000, size=shape).astype(dt)])

_ops("string", {
    f"strings.{name}": (lambda n: lambda xp, a: getattr(xp.strings, n)(a))(name)
    for name in ("upper", "lower", "capitalize", "title", "swapcase", "strip", "lstrip", "rstrip", "str_len",
                 "isalpha", "isdigit", "isspace", "islower", "isupper", "istitle", "isalnum", "isnumeric",
                 "isdecimal")
}, dtypes=("<U6", "<U8"), layouts=("C", "F", "stepped", "negative", "read-only", "broadcast", "big-endian"),
    sample=lambda rng, dt, shape: [_words(rng, dt, shape)])
_ops("string", {
    "strings.add": lambda xp, a: xp.strings.add(a, a), "strings.multiply": lambda xp, a: xp.strings.multiply(a, 2),
    "strings.find": lambda xp, a: xp.strings.find(a, "a"), "strings.count": lambda xp, a: xp.strings.count(a, "b"),
    "strings.replace": lambda xp, a: xp.strings.replace(a, "a", "xy"),
    "strings.startswith": lambda xp, a: xp.strings.startswith(a, "b"),
    "strings.center": lambda xp, a: xp.strings.center(a, 9, "*"), "strings.zfill": lambda xp, a: xp.strings.zfill(a, 7),
    "char.join": lambda xp, a: xp.char.join("-", a), "char.split": lambda xp, a: xp.char.split(a, "a").tolist(),
}, dtypes=("<U6",), layouts=("C", "F", "negative", "read-only"), sample=lambda rng, dt, shape: [_words(rng, dt, shape)])


def _words(rng, dtype, shape):
    letters = numpy.array(list("abcAB 1"))
    size = int(numpy.prod(shape)) if shape else 1
    words = ["".join(rng.choice(letters, rng.integers(0, 6))) for _ in range(size)]
    return numpy.array(words, dtype=dtype).reshape(shape)


# --- numpy.random.Generator methods: the scenario's own rng, so the stream is the seeded one ---------------------

_RANDOM = {
    "integers": lambda g: g.integers(0, 10, size=(3, 4), dtype="int16"),
    "random": lambda g: g.random((2, 3), dtype="float32"),
    "choice": lambda g: g.choice(10, size=4, replace=False),
    "bytes": lambda g: g.bytes(8),
    "shuffle": lambda g: _shuffled(g),
    "permutation": lambda g: g.permutation(8),
    "permuted": lambda g: g.permuted(numpy.arange(12).reshape(3, 4), axis=1),
    "beta": lambda g: g.beta(2.0, 3.0, size=4), "binomial": lambda g: g.binomial(10, 0.3, size=4),
    "chisquare": lambda g: g.chisquare(3, size=4), "dirichlet": lambda g: g.dirichlet([1, 2, 3], size=2),
    "exponential": lambda g: g.exponential(2.0, size=4), "f": lambda g: g.f(3, 4, size=4),
    "gamma": lambda g: g.gamma(2.0, size=4), "geometric": lambda g: g.geometric(0.3, size=4),
    "gumbel": lambda g: g.gumbel(size=4), "hypergeometric": lambda g: g.hypergeometric(5, 7, 4, size=4),
    "laplace": lambda g: g.laplace(size=4), "logistic": lambda g: g.logistic(size=4),
    "lognormal": lambda g: g.lognormal(size=4), "logseries": lambda g: g.logseries(0.6, size=4),
    "multinomial": lambda g: g.multinomial(10, [0.2, 0.3, 0.5], size=2),
    "multivariate_hypergeometric": lambda g: g.multivariate_hypergeometric([3, 4, 5], 6, size=2),
    "multivariate_normal": lambda g: g.multivariate_normal([0.0, 1.0], [[1.0, 0.2], [0.2, 1.0]], size=3),
    "negative_binomial": lambda g: g.negative_binomial(3, 0.4, size=4),
    "noncentral_chisquare": lambda g: g.noncentral_chisquare(3, 1.5, size=4),
    "noncentral_f": lambda g: g.noncentral_f(3, 4, 1.5, size=4), "normal": lambda g: g.normal(1.0, 2.0, size=4),
    "pareto": lambda g: g.pareto(3.0, size=4), "poisson": lambda g: g.poisson(4.0, size=4),
    "power": lambda g: g.power(3.0, size=4), "rayleigh": lambda g: g.rayleigh(size=4),
    "standard_cauchy": lambda g: g.standard_cauchy(4), "standard_exponential": lambda g: g.standard_exponential(4),
    "standard_gamma": lambda g: g.standard_gamma(2.5, size=4), "standard_normal": lambda g: g.standard_normal(4),
    "standard_t": lambda g: g.standard_t(5, size=4), "triangular": lambda g: g.triangular(0, 1, 3, size=4),
    "uniform": lambda g: g.uniform(-1, 1, size=4), "vonmises": lambda g: g.vonmises(0.0, 4.0, size=4),
    "wald": lambda g: g.wald(1.0, 2.0, size=4), "weibull": lambda g: g.weibull(1.5, size=4),
    "zipf": lambda g: g.zipf(2.0, size=4),
    "spawn": lambda g: [child.integers(0, 100, 3) for child in g.spawn(2)],
}


def _shuffled(g):
    values = g.integers(0, 100, size=8)  # the backend's own array, shuffled in place
    g.shuffle(values)
    return values


def _random_op(method, draw):
    # A Generator of the backend's own (xp.random.default_rng), seeded from the scenario's rng: gold and the
    # candidate draw the same stream, and a proxy's Generator returns its own arrays.
    return Op(f"random.{method}", "random", lambda xp, seed: draw(xp.random.default_rng(seed)), dtypes=NONE,
              layouts=("C",), sample=lambda rng, dt, shape: [int(rng.integers(2 ** 63))])


for _method, _draw in _RANDOM.items():
    register(_random_op(_method, _draw))

# --- numpy.ma: masked inputs through the masked twins of the operations above -----------------------------------

_MA_UNARY = ("abs", "absolute", "arccos", "arcsin", "arctan", "arcsinh", "arccosh", "arctanh", "ceil", "conjugate", "cos", "cosh", "exp",
             "fabs", "floor", "log", "log10", "log2", "negative", "sin", "sinh", "sqrt", "tan", "tanh", "round",
             "around", "round_", "logical_not", "angle")
_MA_BINARY = ("add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod", "fmod",
              "hypot", "arctan2", "power", "maximum", "minimum", "equal", "not_equal", "less", "less_equal",
              "greater", "greater_equal", "logical_and", "logical_or", "logical_xor")
_MA_REDUCE = ("sum", "prod", "product", "cumsum", "cumprod", "mean", "std", "var", "max", "min", "amax", "amin",
              "ptp", "argmax", "argmin", "all", "any", "alltrue", "sometrue", "count", "median", "anom",
              "anomalies", "average", "compressed", "count_masked", "getdata", "getmask", "getmaskarray", "filled",
              "nonzero", "ravel", "sort", "argsort", "transpose", "squeeze", "diagonal", "trace", "diff", "ediff1d",
              "unique", "flatnotmasked_edges", "notmasked_edges", "flatnotmasked_contiguous", "notmasked_contiguous",
              "clump_masked", "clump_unmasked", "compress_rows", "compress_cols", "compress_rowcols", "compress_nd",
              "mask_rows", "mask_cols", "mask_rowcols", "atleast_1d", "atleast_2d", "atleast_3d", "copy",
              "asarray", "asanyarray", "array", "zeros_like", "ones_like", "empty_like", "masked_all_like",
              "is_masked", "isMA", "isMaskedArray", "isarray", "ndim", "shape", "size", "masked_invalid",
              "fix_invalid", "harden_mask", "soften_mask", "corrcoef", "cov", "diag", "expand_dims", "flatten_mask",
              "make_mask", "is_mask", "make_mask_none", "ids", "masked_object", "default_fill_value",
              "maximum_fill_value", "minimum_fill_value", "common_fill_value", "set_fill_value")
_MA_ARGS = {
    "median": lambda xp, a: xp.ma.median(a, axis=0), "average": lambda xp, a: xp.ma.average(a, axis=1),
    "mean": lambda xp, a: xp.ma.mean(a, axis=0), "cumsum": lambda xp, a: xp.ma.cumsum(a, axis=1),
    "flatten_mask": lambda xp, a: xp.ma.flatten_mask(xp.ma.getmaskarray(a)),
    "make_mask": lambda xp, a: xp.ma.make_mask(xp.ma.getmaskarray(a), shrink=False),
    "is_mask": lambda xp, a: xp.ma.is_mask(xp.ma.getmaskarray(a)),
    "make_mask_none": lambda xp, a: xp.ma.make_mask_none(a.shape), "ids": lambda xp, a: len(xp.ma.ids(a)),
    "masked_object": lambda xp, a: xp.ma.masked_object(xp.ma.filled(a, 0.0), 0.0),
    "default_fill_value": lambda xp, a: xp.ma.default_fill_value(a),
    "maximum_fill_value": lambda xp, a: xp.ma.maximum_fill_value(a),
    "minimum_fill_value": lambda xp, a: xp.ma.minimum_fill_value(a),
    "common_fill_value": lambda xp, a: xp.ma.common_fill_value(a, a),
    "set_fill_value": lambda xp, a: _ma_fill(xp, a),
    "masked_all_like": lambda xp, a: xp.ma.getmaskarray(xp.ma.masked_all_like(a)),
    "empty_like": lambda xp, a: xp.ma.empty_like(a).shape,
    "harden_mask": lambda xp, a: xp.ma.harden_mask(xp.ma.copy(a)).hardmask,
    "soften_mask": lambda xp, a: xp.ma.soften_mask(xp.ma.copy(a)).hardmask,
    "expand_dims": lambda xp, a: xp.ma.expand_dims(a, 1),
    **{name: (lambda n: lambda xp, a: _no_slices(getattr(xp.ma, n)(a)))(name)
       for name in ("flatnotmasked_contiguous", "notmasked_contiguous", "clump_masked", "clump_unmasked")},
}


def _no_slices(found):
    """Slices (which results cannot hold) as [start, stop, step], in whatever lists hold them."""
    if isinstance(found, slice):
        return [found.start, found.stop, found.step]
    if isinstance(found, (list, tuple)):
        return [_no_slices(item) for item in found]
    return found


def _ma_fill(xp, a):
    b = xp.ma.copy(a)
    xp.ma.set_fill_value(b, -7.0)
    return xp.ma.filled(b)


def _ma_mutated(a, fill):
    b = a.copy()
    fill(b)
    return b


# numpy.ma's domained operations (and mean/average, which divide) on fsproxy's arrays leave a ProxyNDArray as the
# result's mask; MaskedArray's pickle writes the mask's bytes, so it unpickles plain (every variant, verified).
_PROXY_MASK_OPS = {"arccos", "arccosh", "arcsin", "arctanh", "log", "log10", "log2", "sqrt", "tan", "divide",
                   "true_divide", "floor_divide", "remainder", "mod", "fmod", "mean", "average"}
_PROXY_MASK = {"fsproxy": {"compare": {"pickle": "numpy.ma's domained operations leave the proxy's ProxyNDArray as "
                                                 "the mask, which MaskedArray's pickle writes as plain bytes: it "
                                                 "unpickles as a plain ndarray (NumPy's mask is plain before and after)"}}}


def _ma_op(name, call, nargs=1, domain="any"):
    return Op(f"ma.{name}", "masked", call, dtypes=F64 + ("float32",), layouts=MEMORY, nargs=nargs, domain=domain,
              masked=True, differences=_PROXY_MASK if name in _PROXY_MASK_OPS else {})


for _name in _MA_UNARY:
    register(_ma_op(_name, _MA_ARGS.get(_name, (lambda n: lambda xp, a: getattr(xp.ma, n)(a))(_name)),
                    domain=_DOMAINS.get(_name, "positive" if _name in ("log", "log10", "log2", "sqrt") else "unit")))
for _name in _MA_BINARY:
    register(_ma_op(_name, (lambda n: lambda xp, a, b: getattr(xp.ma, n)(a, b))(_name), nargs=2,
                    domain=_DOMAINS.get(_name, "any")))
for _name in _MA_REDUCE:
    register(_ma_op(_name, _MA_ARGS.get(_name, (lambda n: lambda xp, a: getattr(xp.ma, n)(a))(_name))))

_ops("masked", {
    f"ma.{name}": (lambda n: lambda xp, a: getattr(xp.ma, n)(a, 0.5))(name)
    for name in ("masked_greater", "masked_greater_equal", "masked_less", "masked_less_equal", "masked_equal",
                 "masked_not_equal", "masked_values")
}, dtypes=F64, layouts=MEMORY)
_ops("masked", {
    "ma.masked_inside": lambda xp, a: xp.ma.masked_inside(a, -1, 1),
    "ma.masked_outside": lambda xp, a: xp.ma.masked_outside(a, -1, 1),
    "ma.masked_where": lambda xp, a: xp.ma.masked_where(a > 0, a),
    "ma.concatenate": lambda xp, a: xp.ma.concatenate([a, a], axis=1),
    "ma.stack": lambda xp, a: xp.ma.stack([a, a]), "ma.hstack": lambda xp, a: xp.ma.hstack([a, a]),
    "ma.vstack": lambda xp, a: xp.ma.vstack([a, a]), "ma.dstack": lambda xp, a: xp.ma.dstack([a, a]),
    "ma.column_stack": lambda xp, a: xp.ma.column_stack([a[0], a[1]]),
    "ma.row_stack": lambda xp, a: _deprecated(lambda: xp.ma.row_stack([a[0], a[1]])),
    "ma.hsplit": lambda xp, a: xp.ma.hsplit(a, 2),
    "ma.append": lambda xp, a: xp.ma.append(a, a, axis=0), "ma.repeat": lambda xp, a: xp.ma.repeat(a, 2, axis=1),
    "ma.reshape": lambda xp, a: xp.ma.reshape(a, (2, 6)), "ma.resize": lambda xp, a: xp.ma.resize(a, (2, 3)),
    "ma.swapaxes": lambda xp, a: xp.ma.swapaxes(a, 0, 1), "ma.take": lambda xp, a: xp.ma.take(a, [0, 2], axis=1),
    "ma.where": lambda xp, a: xp.ma.where(a > 0, a, -a), "ma.choose": lambda xp, a: xp.ma.choose([0, 1, 0], [a[0, :3], a[1, :3]]),
    "ma.compress": lambda xp, a: xp.ma.compress([True, False, True], a, axis=0),
    "ma.clip": lambda xp, a: xp.ma.clip(a, -1, 1), "ma.put": lambda xp, a: _ma_mutated(a, lambda b: xp.ma.put(b, [0, 3], [9, 8])),
    "ma.putmask": lambda xp, a: _ma_mutated(a, lambda b: xp.ma.putmask(b, b > 0, 0.0)),
    "ma.dot": lambda xp, a: xp.ma.dot(a, a.T), "ma.inner": lambda xp, a: xp.ma.inner(a, a),
    "ma.innerproduct": lambda xp, a: xp.ma.innerproduct(a, a), "ma.outer": lambda xp, a: xp.ma.outer(a[0], a[1]),
    "ma.outerproduct": lambda xp, a: xp.ma.outerproduct(a[0], a[1]),
    "ma.convolve": lambda xp, a: xp.ma.convolve(a[0], a[1]), "ma.correlate": lambda xp, a: xp.ma.correlate(a[0], a[1]),
    "ma.allclose": lambda xp, a: xp.ma.allclose(a, a), "ma.allequal": lambda xp, a: xp.ma.allequal(a, a),
    "ma.apply_along_axis": lambda xp, a: xp.ma.apply_along_axis(lambda r: r.sum(), 1, a),
    "ma.apply_over_axes": lambda xp, a: xp.ma.apply_over_axes(xp.ma.sum, a, [0]),
    "ma.in1d": lambda xp, a: xp.ma.in1d(a, a[0]), "ma.isin": lambda xp, a: xp.ma.isin(a, a[0]),
    "ma.intersect1d": lambda xp, a: xp.ma.intersect1d(a[0], a[1]), "ma.union1d": lambda xp, a: xp.ma.union1d(a[0], a[1]),
    "ma.setdiff1d": lambda xp, a: xp.ma.setdiff1d(a[0], a[1]), "ma.setxor1d": lambda xp, a: xp.ma.setxor1d(a[0], a[1]),
    "ma.left_shift": lambda xp, a: xp.ma.left_shift(xp.ma.asarray(a, dtype=int), 1),
    "ma.right_shift": lambda xp, a: xp.ma.right_shift(xp.ma.asarray(a, dtype=int), 1),
    "ma.bitwise_and": lambda xp, a: xp.ma.bitwise_and(xp.ma.asarray(a, dtype=int), 6),
    "ma.bitwise_or": lambda xp, a: xp.ma.bitwise_or(xp.ma.asarray(a, dtype=int), 6),
    "ma.bitwise_xor": lambda xp, a: xp.ma.bitwise_xor(xp.ma.asarray(a, dtype=int), 6),
    "ma.count_masked_axis": (lambda xp, a: xp.ma.count_masked(a, axis=0), {"needs": "ma.count_masked"}),
    "ma.mask_or": lambda xp, a: xp.ma.mask_or(xp.ma.getmaskarray(a), xp.ma.getmaskarray(a[::-1])),
    "ma.polyfit": lambda xp, a: xp.ma.polyfit(xp.ma.arange(4.0), a[0], 1),
    "ma.vander": lambda xp, a: xp.ma.vander(a[0], 3),
    "ma.diagflat": lambda xp, a: xp.ma.diagflat(a[0]), "ma.fromflex": lambda xp, a: xp.ma.fromflex(a.toflex()),
    "ma.ndenumerate": lambda xp, a: [(i, float(v)) for i, v in xp.ma.ndenumerate(a)],
}, dtypes=F64, layouts=MEMORY, masked=True)

_ops("masked", {
    "ma.arange": lambda xp: xp.ma.arange(5), "ma.zeros": lambda xp: xp.ma.zeros((2, 3)),
    "ma.ones": lambda xp: xp.ma.ones(3), "ma.empty": lambda xp: xp.ma.empty((0, 2)),
    "ma.identity": lambda xp: xp.ma.identity(3), "ma.indices": lambda xp: xp.ma.indices((2, 2)),
    "ma.masked_all": lambda xp: xp.ma.getmaskarray(xp.ma.masked_all((2, 2))),
    "ma.fromfunction": lambda xp: xp.ma.fromfunction(lambda i, j: i + j, (2, 3)),
    "ma.frombuffer": lambda xp: xp.ma.frombuffer(bytes(range(8)), dtype="u1"),
    "ma.flatten_structured_array": lambda xp: xp.ma.flatten_structured_array(
        xp.ma.array([(1, 2.0), (3, 4.0)], mask=[(0, 1), (0, 0)], dtype=[("a", "i4"), ("b", "f8")])),
    "ma.make_mask_descr": lambda xp: str(xp.ma.make_mask_descr(xp.dtype([("a", "f8"), ("b", "i4")]))),
}, dtypes=NONE, layouts=("C",), sample=lambda rng, dt, shape: [])
