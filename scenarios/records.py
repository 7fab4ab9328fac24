"""Non-numeric dtype scenarios: datetime64 and timedelta64 with units and NaT, strings, structured arrays."""
import parity
from parity import xfails


@parity.scenario(rtol=0.0, params={"unit": ["D", "s", "ns"]}, tags=["numpy", "datetime"])
def datetimes(xp, rng, unit):
    days = xp.arange("2024-02-26", "2024-03-04", dtype="datetime64[D]")
    stamps = days.astype(f"datetime64[{unit}]")
    with_nat = stamps.copy()
    with_nat[2] = xp.datetime64("NaT")
    offsets = xp.asarray(rng.integers(0, 1000, size=stamps.size), dtype=f"timedelta64[{unit}]")
    return {
        "days": days,
        "stamps": stamps,
        "with_nat": with_nat,
        "isnat": xp.isnat(with_nat),
        "shifted": with_nat + offsets,  # NaT stays NaT
        "differences": xp.diff(with_nat),  # timedelta64 in the same unit
        "less": with_nat < stamps[3],  # comparisons with NaT are False
        "max_with_nat": with_nat.max(),  # NaT propagates, like NaN
        "months": days.astype("datetime64[M]"),
        "scalar": xp.datetime64("2024-02-29T12:34:56", unit),
        "nat_scalar": xp.datetime64("NaT", unit),
        "sorted": xp.sort(with_nat),  # NaT sorts last
        "strings": xp.datetime_as_string(stamps[:2], unit="s"),
    }


@parity.scenario(rtol=1e-12, atol=0.0, tags=["numpy", "datetime", "timedelta"])
def timedeltas(xp, rng):
    deltas = xp.asarray(rng.integers(-5000, 5000, size=6), dtype="timedelta64[ms]")
    deltas[4] = xp.timedelta64("NaT")
    hour = xp.timedelta64(1, "h")
    return {
        "deltas": deltas,
        "scaled": deltas * 3,
        "as_seconds": deltas.astype("timedelta64[s]"),  # truncates toward zero
        "ratio": deltas / xp.timedelta64(250, "ms"),  # float64, NaN at NaT
        "floor_divide": deltas[:4] // xp.timedelta64(300, "ms"),  # int64
        "remainder": deltas[:4] % xp.timedelta64(300, "ms"),
        "abs": xp.abs(deltas),
        "sum": deltas[:4].sum(),
        "hour_in_us": hour.astype("timedelta64[us]"),
        "nat": xp.timedelta64("NaT", "s"),
    }


@parity.scenario(rtol=0.0, tags=["numpy", "strings"])
def strings(xp, rng):
    words = xp.asarray(["alpha", "Beta", "gämma", "δέλτα", "", "中文字", "emoji🙂"])
    raw = xp.asarray([b"abc", b"", b"\x00\xff", b"tail  "], dtype="S6")
    picks = xp.asarray(rng.permutation(words.size), dtype=xp.int64)
    return {
        "words": words,  # <U6
        "raw": raw,
        "shuffled": words[picks],
        "upper": xp.strings.upper(words),
        "lengths": xp.strings.str_len(words),
        "joined": xp.strings.add(words, "!"),
        "sorted": xp.sort(words),  # by code point
        "equal": words == "Beta",
        "startswith": xp.strings.startswith(words, "a"),
        "encoded": xp.strings.encode(words[:2], "ascii"),
        "raw_stripped": xp.strings.strip(raw),
        "padded": xp.strings.zfill(xp.asarray(["7", "42"]), 4),
        "fixed_width": words.astype("<U3"),  # truncates
        "matrix_f": xp.asfortranarray(xp.asarray([["a", "bb"], ["ccc", "d"]])),
        "scalar": words[1],
    }


@parity.scenario(rtol=1e-12, atol=0.0, params={"align": [False, True]}, tags=["numpy", "structured"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("dtype", "layout")}))
def structured(xp, rng, align):
    fields = [("id", "<i4"), ("pos", "<f8", (3,)), ("flag", "?"), ("name", "<U5"), ("code", "S3"), ("weight", ">f4")]
    record = xp.dtype(fields, align=align)  # align=True inserts padding and changes offsets
    n = 6
    rec = xp.zeros(n, dtype=record)  # zeros, not empty: padding bytes must be deterministic
    rec["id"] = xp.asarray(rng.permutation(n), dtype=xp.int32)
    rec["pos"] = xp.asarray(rng.standard_normal((n, 3)))
    rec["flag"] = rec["id"] % 2 == 0
    rec["name"] = xp.asarray(["ab", "cd", "éf", "gh", "ij", "kl"])
    rec["code"] = xp.asarray([b"x", b"yy", b"zzz", b"", b"w", b"v"])
    rec["weight"] = xp.asarray(rng.uniform(0, 1, size=n))
    return {
        "records": rec,
        "itemsize": rec.dtype.itemsize,
        "ids": rec["id"],  # a strided view into the records
        "positions": rec["pos"],  # a sub-array field: shape (n, 3)
        "weights": rec["weight"],  # a big-endian field view
        "sorted_by_id": xp.sort(rec, order="id"),
        "selected": rec[rec["flag"]],
        # Cast to a packed dtype: a plain copy of a multi-field view keeps the other fields' bytes as padding.
        "two_fields": rec[["id", "weight"]].astype(xp.dtype([("id", "<i4"), ("weight", ">f4")])),
        "mean_position": rec["pos"].mean(axis=0),
    }
