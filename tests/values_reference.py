"""Random cases for values_test.cc's property test, and a plain NumPy reference of compare_values' documented rule."""

import warnings

import numpy as np

# The first mismatches the kernel lists (values.h kFirstMismatches).
FIRST = 5

# The most cells of a mismatch map along rows and along columns (values.h kMapRows, kMapColumns).
MAP_ROWS, MAP_COLUMNS = 16, 64

TOLERANCES = (0.0, 1e-12, 1e-7, 1e-3, 0.5)

FLOATS = ("f2", "f4", "f8", "g")
COMPLEXES = ("c8", "c16", "G")
INTEGERS = ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "?")
DATETIMES = ("M8[s]", "M8[ms]", "M8[D]")
TIMEDELTAS = ("m8[s]", "m8[ms]", "m8[us]")

# Larger than NpyIter's 8192-element buffer, so a pass spans several buffers.
BUFFER = 8192

NAT = np.iinfo(np.int64).min


# ---------------------------------------------------------------------------------------------------------------------
# Generating cases


def _shape(rng):
    r = rng.random()
    if r < 0.04:  # larger than the iterator's buffer
        big = int(rng.integers(BUFFER + 1, 2 * BUFFER + 3000))
        pick = rng.integers(3)
        if pick == 0:
            return (big,)
        if pick == 1:
            rows = int(rng.integers(40, 120))
            return (rows, big // rows + 1)
        return (int(rng.integers(22, 30)), int(rng.integers(22, 30)), int(rng.integers(18, 25)))
    if r < 0.10:
        return ()
    if r < 0.16:  # empty
        shape = [int(rng.integers(0, 4)) for _ in range(int(rng.integers(1, 4)))]
        shape[int(rng.integers(len(shape)))] = 0
        return tuple(shape)
    if r < 0.22:
        return (1,) * int(rng.integers(1, 4))
    return tuple(int(rng.integers(1, 8)) for _ in range(int(rng.integers(1, 5))))


def _place(values, dtype, rng):
    """`values` (native) as `dtype` (either byte order) in a random memory layout, with the same logical content."""
    shape = values.shape
    layout = _pick(rng, ["C", "F", "strided", "transposed", "misaligned", "misaligned-F"])
    if layout == "F":
        out = np.empty(shape, dtype, order="F")
    elif layout == "strided":
        steps = [_pick(rng, (1, 2, 3, -1, -2)) for _ in shape]
        base = np.empty([n * abs(s) for n, s in zip(shape, steps)], dtype)
        out = base[tuple(slice(None, None, s) for s in steps) + (Ellipsis,)]  # a view even when 0-d
    elif layout == "transposed":
        perm = rng.permutation(len(shape))
        base_shape = [0] * len(shape)
        for i, axis in enumerate(perm):
            base_shape[axis] = shape[i]
        out = np.empty(base_shape, dtype).transpose(perm)
    elif layout.startswith("misaligned"):
        size = int(np.prod(shape, dtype=np.int64))
        buf = np.empty(size * dtype.itemsize + 1, np.uint8)
        out = buf[1:].view(dtype).reshape(shape, order="F" if layout.endswith("F") else "C")
    else:
        out = np.empty(shape, dtype)
    assert out.shape == shape
    out[...] = values
    return out


def _byte_order(dtype, rng):
    return np.dtype(dtype).newbyteorder(_pick(rng, "<>"))


def _int_range(dtype):
    if dtype.kind == "b":
        return 0, 1
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _pick(rng, options):
    # Generator.choice turns a list into an array first, which rounds Python ints past int64 to float.
    return options[int(rng.integers(len(options)))]


def _rand_ints(rng, lo, hi, n):
    kind = np.int64 if hi <= np.iinfo(np.int64).max else np.uint64
    return rng.integers(lo, hi, endpoint=True, size=n, dtype=kind).astype(object)


# Integers where float64 rounding, int64/uint64 mixing or unsigned subtraction would go wrong.
EDGE_INTS = (0, 1, -1, 127, 128, 255, 2**15, 2**31 - 1, 2**32 - 1, 2**53, 2**53 + 1, 2**63 - 1, 2**63, 2**63 + 1,
             2**64 - 1, -(2**53) - 1, -(2**63))


def _int_values(rng, n, lo, hi):
    mode = rng.integers(3)
    if mode == 0:
        vals = _rand_ints(rng, max(lo, -100), min(hi, 100), n)
    else:
        vals = _rand_ints(rng, lo, hi, n)
    if mode == 2 or rng.random() < 0.3:
        edges = [v for v in EDGE_INTS + (lo, hi) if lo <= v <= hi]
        at = rng.random(n) < 0.3
        vals[at] = np.array(edges, dtype=object)[rng.integers(len(edges), size=int(at.sum()))]
    return vals


def _in_range(vals, lo, hi):
    return np.asarray((vals >= lo) & (vals <= hi), dtype=bool)


def _perturb_ints(rng, vals, lo, hi):
    """`vals` (Python ints) moved into [lo, hi], then changed in random places by one, to the ends or at random."""
    vals = vals.copy()
    outside = ~_in_range(vals, lo, hi)
    vals[outside] = _rand_ints(rng, lo, hi, int(outside.sum()))
    at = np.flatnonzero(rng.random(vals.size) < _pick(rng, (0.0, 0.02, 0.2, 0.7)))
    old = vals[at]
    step = np.where(rng.random(at.size) < 0.5, -1, 1).astype(object)
    near = old + step
    near = np.where(_in_range(near, lo, hi), near, old - step)
    ends = np.array([lo, hi], dtype=object)[rng.integers(2, size=at.size)]
    edges = np.array([v for v in EDGE_INTS if lo <= v <= hi], dtype=object)
    how = rng.integers(4, size=at.size)
    new = np.where(how == 0, near, _rand_ints(rng, lo, hi, at.size))
    new = np.where(how == 2, ends, new)
    vals[at] = np.where(how == 3, edges[rng.integers(edges.size, size=at.size)], new)
    return vals


def _float_specials(dtype):
    fi = np.finfo(dtype)
    return np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, fi.smallest_subnormal, -fi.smallest_subnormal,
                     fi.smallest_normal, fi.max, -fi.max, 1.0], dtype=dtype)


def _real_values(rng, n, dtype):
    """Random values of the real dtype `dtype`, with NaN, infinities, signed zeros and subnormals sprinkled in."""
    mode = rng.integers(4)
    scale = 10.0 ** int(rng.integers(-6, 7))
    if mode == 0:
        vals = rng.standard_normal(n) * scale
    elif mode == 1:
        vals = np.round(rng.standard_normal(n) * scale)
    elif mode == 2:
        vals = rng.integers(-3, 4, size=n).astype(np.float64)
    else:
        vals = rng.uniform(-1, 1, n) * 10.0 ** rng.integers(-300, 300, size=n)
    vals = vals.astype(dtype)
    if dtype == np.longdouble:  # digits beyond float64's 53 bits
        vals = vals * (1 + np.finfo(np.longdouble).eps * rng.integers(-1000, 1000, size=n).astype(np.longdouble))
    if rng.random() < 0.5:
        at = rng.random(n) < _pick(rng, [0.05, 0.3])
        specials = _float_specials(dtype)
        vals[at] = specials[rng.integers(len(specials), size=int(at.sum()))]
    return vals


def _perturb_reals(rng, vals, gold, tol):
    """`vals` (the candidate's reals) changed in random places: within, at and beyond the tolerance, or to specials."""
    vals = vals.copy()
    dtype = vals.dtype
    n = vals.size
    p = _pick(rng, [0.0, 0.02, 0.2, 0.7])
    at = np.flatnonzero(rng.random(n) < p)
    if not at.size:
        return vals
    how = rng.integers(6, size=at.size)
    rel = np.array([1e-15, 1e-12, 1e-9, 1e-7, 1e-5, 1e-3, 0.1, 0.5, 1.0, 3.0])
    sign = rng.choice([-1.0, 1.0], size=at.size)
    factor = rel[rng.integers(rel.size, size=at.size)] * sign
    v = vals[at]
    g = gold[at].astype(np.longdouble if dtype == np.longdouble else np.float64)
    specials = _float_specials(dtype)
    new = np.where(how == 0, v * (1 + factor), v)
    new = np.where(how == 1, v + factor, new)
    bound = (tol[1] + tol[0] * np.abs(g)) * sign  # on the tolerance's edge, as far as rounding allows
    new = np.where(how == 2, (g + bound).astype(dtype), new)
    new = np.where(how == 3, specials[rng.integers(specials.size, size=at.size)], new)
    new = np.where(how == 4, -v, new)
    new = np.where(how == 5, np.nextafter(v, dtype.type(_pick(rng, [-np.inf, np.inf]))), new)
    vals[at] = new.astype(dtype)
    return vals


def _numeric_gold(rng, n, dtype):
    if dtype.kind in "biu":
        lo, hi = _int_range(dtype)
        return np.array(_int_values(rng, n, lo, hi), dtype=dtype)
    if dtype.kind == "c":
        part = np.dtype(dtype.char.lower())  # F, D, G: complex of f, d, g
        out = np.empty(n, dtype)
        out.real = _real_values(rng, n, part)
        out.imag = _real_values(rng, n, part)
        return out
    return _real_values(rng, n, dtype)


def _numeric_candidate(rng, gold, dtype, tol):
    if dtype.kind in "biu":
        lo, hi = _int_range(dtype)
        if gold.dtype.kind in "fc":
            real = np.nan_to_num(gold.real.astype(np.float64), posinf=hi, neginf=lo)
            vals = np.array([int(v) for v in np.round(np.clip(real, lo, hi))], dtype=object)
        else:
            vals = gold.astype(object)
        return np.array(_perturb_ints(rng, vals, lo, hi), dtype=dtype)
    if dtype.kind == "c":
        cand = gold.astype(dtype)
        g = gold.astype(np.result_type(gold.dtype, np.complex64))
        if rng.random() < 0.5:  # both parts of the same elements
            state = rng.bit_generator.state
            cand.real = _perturb_reals(rng, cand.real.copy(), g.real, tol)
            rng.bit_generator.state = state
            cand.imag = _perturb_reals(rng, cand.imag.copy(), g.imag, tol)
        else:
            cand.real = _perturb_reals(rng, cand.real.copy(), g.real, tol)
            cand.imag = _perturb_reals(rng, cand.imag.copy(), g.imag, tol)
        return cand
    real = gold.real if gold.dtype.kind == "c" else gold
    return _perturb_reals(rng, real.astype(dtype), real, tol)


def _numeric_case(rng, n, tol):
    groups = [FLOATS, COMPLEXES, INTEGERS]
    gdt = np.dtype(_pick(rng, groups[rng.integers(3)]))
    cdt = gdt if rng.random() < 0.5 else np.dtype(_pick(rng, groups[rng.integers(3)]))
    if gdt.kind in "iu" and rng.random() < 0.2:  # int64 against uint64, either way round
        gdt, cdt = (np.dtype("i8"), np.dtype("u8"))[:: _pick(rng, (1, -1))]
    gold = _numeric_gold(rng, n, gdt)
    cand = _numeric_candidate(rng, gold, cdt, tol)
    if gdt.kind in "fc" and rng.random() < 0.3:  # NaN or infinity in gold only
        at = rng.random(n) < 0.1
        specials = np.array([np.nan, np.inf, -np.inf, complex(np.nan, 1), complex(1, np.inf), complex(np.inf, np.nan)])
        if gdt.kind == "f":
            specials = specials[:3].real
        gold[at] = specials[rng.integers(specials.size, size=int(at.sum()))].astype(gdt)
    return gold, cand


def _datetime_case(rng, n):
    group = DATETIMES if rng.random() < 0.5 else TIMEDELTAS
    gdt = np.dtype(_pick(rng, group))
    cdt = gdt if rng.random() < 0.5 else np.dtype(_pick(rng, group))
    ints = rng.integers(-(10**6), 10**6, size=n)
    ints[rng.random(n) < _pick(rng, [0.0, 0.1, 0.5])] = NAT
    gold = ints.view(gdt)
    cand = gold.astype(cdt)
    raw = cand.view(np.int64)
    at = np.flatnonzero(rng.random(n) < _pick(rng, (0.0, 0.05, 0.3)))
    how = rng.integers(3, size=at.size)
    moved = np.where(raw[at] == NAT, NAT, raw[at] + rng.choice([-1, 1], size=at.size))
    new = np.where(how == 0, NAT, rng.integers(-(10**6), 10**6, size=at.size))
    raw[at] = np.where(how == 1, moved, new)
    gold.view(np.int64)[rng.random(n) < _pick(rng, [0.0, 0.05])] = NAT
    return gold, cand


UNICODE = ["", "a", "b", "ab", "abc", "Z", "é", "€", "\U0001d11e", "a\x00b", " ", "aé€", "zzzzzz", "abcdef"]
BYTES = [b"", b"a", b"b", b"ab", b"abc", b"\xff", b"a\x00b", b" ", b"zzzzzz", b"abcdef", b"\x80\x7f"]


def _string_case(rng, n):
    pool = UNICODE if rng.random() < 0.5 else BYTES
    kind = "U" if pool is UNICODE else "S"
    gdt = np.dtype(f"{kind}{rng.integers(1, 7)}")
    cdt = gdt if rng.random() < 0.5 else np.dtype(f"{kind}{rng.integers(1, 7)}")
    values = np.array(pool, dtype=object)
    gold = np.array(values[rng.integers(len(pool), size=n)].tolist() or [], dtype=gdt)
    cand = gold.astype(cdt)
    at = rng.random(n) < _pick(rng, [0.0, 0.05, 0.3])
    cand[at] = np.array(values[rng.integers(len(pool), size=int(at.sum()))].tolist(), dtype=cdt)
    return gold, cand


def make_case(seed, case):
    """Gold, candidate, rtol, atol and signed_zeros of case `case` of `seed`; the same arguments give the same case."""
    rng = np.random.default_rng([seed, case])
    # Casting NaN or out-of-range values is part of the point; NumPy's warnings about it are noise here.
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        shape = _shape(rng)
        n = int(np.prod(shape, dtype=np.int64))
        tol = (_pick(rng, TOLERANCES), _pick(rng, TOLERANCES))
        family = rng.random()
        if family < 0.7:
            gold, cand = _numeric_case(rng, n, tol)
        elif family < 0.85:
            gold, cand = _datetime_case(rng, n)
        else:
            gold, cand = _string_case(rng, n)
        gold = _place(gold.reshape(shape), _byte_order(gold.dtype, rng), rng)
        cand = _place(cand.reshape(shape), _byte_order(cand.dtype, rng), rng)
        return gold, cand, tol[0], tol[1], bool(rng.random() < 0.5)


# ---------------------------------------------------------------------------------------------------------------------
# The reference: values.h's rule, element by element as whole-array NumPy expressions.


def _native(dtype):
    return np.dtype(dtype).newbyteorder("=")


def _is_long(dtype):
    return _native(dtype).type in (np.longdouble, np.clongdouble)


def _real_masks(g, c, rtol, atol, signed_zeros):
    gn, cn = np.isnan(g), np.isnan(c)
    nan = gn != cn
    rest = ~(gn | cn)
    infinite = rest & (np.isinf(g) | np.isinf(c))
    inf = infinite & (g != c)
    finite = rest & ~infinite
    real = g.dtype.type
    diff, ref = np.abs(c - g), np.abs(g)
    close = diff <= real(atol) + real(rtol) * ref
    value = finite & ~close
    zeros = finite & close & (g == 0) & (c == 0) & (np.signbit(g) != np.signbit(c))
    signed_zero = zeros if signed_zeros else np.zeros_like(zeros)
    return nan, inf, value, signed_zero, np.zeros_like(nan), diff, ref


def _complex_masks(g, c, rtol, atol, signed_zeros):
    gr, gi, cr, ci = g.real, g.imag, c.real, c.imag
    nonfinite = ~(np.isfinite(gr) & np.isfinite(gi) & np.isfinite(cr) & np.isfinite(ci))

    def same(a, b):
        return (np.isnan(a) & np.isnan(b)) | (a == b)

    differs = nonfinite & ~(same(gr, cr) & same(gi, ci))
    nan_differs = (np.isnan(gr) != np.isnan(cr)) | (np.isnan(gi) != np.isnan(ci))

    nan = differs & nan_differs
    # An infinity on either side makes it an infinity mismatch, -inf against complex(-inf, 3) included.
    inf = differs & ~nan_differs & (np.isinf(gr) | np.isinf(gi) | np.isinf(cr) | np.isinf(ci))
    # NaN in the same parts and no infinity anywhere, but a finite part differs: neither kind, and not measurable.
    unmeasured = differs & ~nan & ~inf
    finite = ~nonfinite
    real = gr.dtype.type
    # np.abs of a complex array may take a SIMD modulus that differs from libm's hypot in the last bit, which decides
    # elements on the tolerance's edge; np.hypot is libm's hypot, as is the C library's cabs.
    d = c - g
    diff, ref = np.hypot(d.real, d.imag), np.hypot(gr, gi)
    close = diff <= real(atol) + real(rtol) * ref
    rel = np.where(ref > 0, diff / np.where(ref > 0, ref, 1), np.inf)
    # A modulus past the type's range would make the tolerance infinite: such elements are decided on values
    # scaled by a power of two into range; their absolute difference is infinite, their relative one measured.
    huge = np.atleast_1d(finite & ~(np.isfinite(diff) & np.isfinite(ref)))
    if huge.any():
        close, diff, rel = np.atleast_1d(close).copy(), np.atleast_1d(diff).copy(), np.atleast_1d(rel).copy()
        g1, c1 = np.atleast_1d(g)[huge], np.atleast_1d(c)[huge]
        top = np.maximum.reduce([np.abs(g1.real), np.abs(g1.imag), np.abs(c1.real), np.abs(c1.imag)])
        scale = np.ldexp(real(1), -(np.frexp(top)[1] - 1))
        gs, cs = g1 * scale, c1 * scale
        sdiff, sref = np.hypot((cs - gs).real, (cs - gs).imag), np.hypot(gs.real, gs.imag)
        close[huge] = sdiff <= real(atol) * scale + real(rtol) * sref
        diff[huge], rel[huge] = np.inf, sdiff / sref
        close, diff, rel = close.reshape(np.shape(g)), diff.reshape(np.shape(g)), rel.reshape(np.shape(g))
    value = finite & ~close
    zero_signs = (np.signbit(gr) != np.signbit(cr)) | (np.signbit(gi) != np.signbit(ci))
    zeros = finite & close & (g == 0) & (c == 0) & zero_signs
    signed_zero = zeros if signed_zeros else np.zeros_like(zeros)
    return nan, inf, value, signed_zero, unmeasured, diff, ref, rel


def _python_ints(a):
    return (a.astype(np.uint8) if a.dtype.kind == "b" else a).astype(object)


def _as_float(ints):
    # Python int to float rounds to nearest, as the kernel's int128 to double does.
    return np.asarray(np.abs(ints), dtype=object).astype(np.float64)


def _integer_masks(g, c):
    gi, ci = _python_ints(g), _python_ints(c)
    none = np.zeros(g.shape, bool)
    return none, none, gi != ci, none, none, _as_float(ci - gi), _as_float(gi)


def _datetime_masks(g, c):
    common = _native(np.promote_types(g.dtype, c.dtype))
    gi = g.astype(common).view(np.int64).astype(object)
    ci = c.astype(common).view(np.int64).astype(object)
    differs = np.asarray(gi != ci, dtype=bool)
    nat = np.asarray((gi == NAT) | (ci == NAT), dtype=bool)
    diff = _as_float(ci - gi)
    ref = np.abs(g.astype(common).view(np.int64).astype(np.float64))
    none = np.zeros(g.shape, bool)
    return differs & nat, none, differs & ~nat, none, none, diff, ref


def _first(mask, limit=FIRST):
    flat = np.flatnonzero(np.ascontiguousarray(mask))[:limit]
    return [tuple(int(i) for i in np.unravel_index(f, mask.shape)) for f in flat]


def _extreme(values, mask):
    """The largest of `values` where `mask` holds and its first index in C order; None if `mask` holds nowhere."""
    if not mask.any():
        return None
    # inf / inf (a complex gold whose modulus overflows) is no difference at all, so it is never the largest; only
    # when every violation has one is NaN what there is to show.
    if not (mask & ~np.isnan(values)).any():
        return float("nan"), _first(mask, 1)[0]
    masked = np.ascontiguousarray(np.where(mask & ~np.isnan(values), values, -1.0))
    flat = int(np.argmax(masked))
    return float(masked.flat[flat]), tuple(int(i) for i in np.unravel_index(flat, mask.shape))


def _map(every):
    """The mismatch map of the violations `every`: None unless some violate in an array of one or two axes."""
    if every.ndim not in (1, 2) or not every.any():
        return None
    rows, columns = every.shape if every.ndim == 2 else (1, every.size)
    grid_rows, grid_columns = min(rows, MAP_ROWS), min(columns, MAP_COLUMNS)
    row_cell = np.arange(rows) * grid_rows // rows
    column_cell = np.arange(columns) * grid_columns // columns
    cell = (row_cell[:, None] * grid_columns + column_cell[None, :]).ravel()
    cells = grid_rows * grid_columns
    return {
        "shape": list(every.shape),
        "grid": [grid_rows, grid_columns] if every.ndim == 2 else [grid_columns],
        "counts": np.bincount(cell[every.ravel()], minlength=cells).tolist(),
        "sizes": np.bincount(cell, minlength=cells).tolist(),
    }


def reference(gold, candidate, rtol, atol, signed_zeros):
    """The report values.h describes for these arrays, as a dict of plain Python values."""
    gd, cd = gold.dtype, candidate.dtype
    numeric = {gd.kind, cd.kind} <= set("biufc")
    with np.errstate(all="ignore"):
        if numeric and {gd.kind, cd.kind} & set("fc"):
            criterion = "allclose"
            long = _is_long(gd) or _is_long(cd)
            if "c" in (gd.kind, cd.kind):
                work = np.clongdouble if long else np.complex128
                masks = _complex_masks(gold.astype(work), candidate.astype(work), rtol, atol, signed_zeros)
            else:
                work = np.longdouble if long else np.float64
                masks = _real_masks(gold.astype(work), candidate.astype(work), rtol, atol, signed_zeros)
        elif numeric:
            criterion = "exact"
            masks = _integer_masks(gold, candidate)
        elif gd.kind in "Mm" and gd.kind == cd.kind:
            criterion = "exact"
            masks = _datetime_masks(gold, candidate)
        elif gd.kind == cd.kind:
            criterion = "exact"
            common = np.promote_types(gd, cd)
            value = np.asarray(gold.astype(common) != candidate.astype(common), dtype=bool)
            none = np.zeros(gold.shape, bool)
            masks = none, none, value, none, none, None, None
        else:
            raise ValueError(f"the property test makes no {gd} against {cd} cases")
        # 0-d operands make NumPy scalars; arrays of the operands' shape keep indexing uniform.
        nan, inf, value, signed_zero, unmeasured = (np.asarray(m, dtype=bool).reshape(gold.shape) for m in masks[:5])
        diff, ref = masks[5:7]
        measured = diff is not None
        if measured:
            diff, ref = np.asarray(diff).reshape(gold.shape), np.asarray(ref).reshape(gold.shape)
            abs_diff = diff.astype(np.float64)
            rel_diff = np.where(ref > 0, diff / np.where(ref > 0, ref, 1), np.inf).astype(np.float64)
            if len(masks) > 7:  # complex: the relative difference measured on scaled values where needed
                rel_diff = np.asarray(masks[7]).reshape(gold.shape).astype(np.float64)
    kinds = np.full(gold.shape, "", dtype=object)
    for mask, name in ((value, "value"), (unmeasured, "value"), (nan, "nan"), (inf, "inf"),
                       (signed_zero, "signed-zero")):
        kinds[mask] = name
    every = nan | inf | value | signed_zero | unmeasured
    first = _first(every)
    return {
        "criterion": criterion,
        "total": int(gold.size),
        "mismatched": int(every.sum()),
        "nan_mismatched": int(nan.sum()),
        "inf_mismatched": int(inf.sum()),
        "signed_zero_mismatched": int(signed_zero.sum()),
        "has_differences": measured,
        "first": [(i, kinds[i], repr(gold[i].item()), repr(candidate[i].item())) for i in first],
        "first_nonfinite": _first(nan | inf),
        "max_abs": _extreme(abs_diff, value) if measured else None,
        "max_rel": _extreme(rel_diff, value) if measured else None,
        "map": _map(every),
    }


def describe(array):
    """What a disagreement report shows of one side: dtype, layout and contents."""
    with np.printoptions(threshold=60, edgeitems=4, precision=20, floatmode="maxprec"):
        return (f"dtype {array.dtype.str} ({array.dtype}) shape {array.shape} strides {array.strides} "
                f"c_contiguous={array.flags.c_contiguous} f_contiguous={array.flags.f_contiguous} "
                f"aligned={array.flags.aligned}\n{array!r}")
