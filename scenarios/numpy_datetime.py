"""NumPy datetime scenarios: datetime64/timedelta64 array arithmetic, unit conversion and business-day functions."""
import parity


@parity.scenario(rtol=0.0, params={"unit": ["D", "h", "ms", "us"]}, tags=["numpy", "datetime", "timedelta"])
def arithmetic(xp, rng, unit):
    start = xp.datetime64("2023-12-30T06:00", unit)
    offsets = xp.asarray(rng.integers(-10**3, 10**4, size=(3, 4)), dtype=f"timedelta64[{unit}]")
    stamps = start + offsets
    return {
        "stamps": stamps,
        "diffs": xp.diff(stamps.ravel()),
        "minus_start": stamps - start,
        "as_days": stamps.astype("datetime64[D]"),
        "as_months": stamps.astype("datetime64[M]"),
        "scaled": offsets * 3 // 2,
        "ratio": offsets / xp.timedelta64(1, unit),
        "sorted": xp.sort(stamps, axis=None),
        "max": stamps.max(axis=0),
        "nat_mask": xp.isnat(xp.where(offsets > xp.timedelta64(0, unit), stamps, xp.datetime64("NaT", unit))),
    }


@parity.scenario(rtol=0.0, params={"weekmask": ["1111100", "Mon Wed Fri"]}, tags=["numpy", "datetime", "busday"])
def business_days(xp, rng, weekmask):
    begin = xp.datetime64("2024-01-01") + xp.asarray(rng.integers(0, 300, size=8), dtype="timedelta64[D]")
    end = begin + xp.asarray(rng.integers(-20, 60, size=8), dtype="timedelta64[D]")
    holidays = xp.asarray(["2024-01-01", "2024-05-27", "2024-07-04", "2024-12-25"], dtype="datetime64[D]")
    return {
        "count": xp.busday_count(begin, end, weekmask=weekmask, holidays=holidays),
        "is_busday": xp.is_busday(begin, weekmask=weekmask, holidays=holidays),
        "offset_forward": xp.busday_offset(begin, 5, roll="forward", weekmask=weekmask, holidays=holidays),
        "offset_back": xp.busday_offset(begin, -3, roll="backward", weekmask=weekmask),
    }


@parity.scenario(rtol=0.0, tags=["numpy", "datetime", "strings"])
def parsing_and_formatting(xp):
    stamps = xp.asarray(["2024-02-29T23:59:59.999", "1969-12-31T00:00", "2000-01-01", "NaT"], dtype="datetime64[ms]")
    return {
        "stamps": stamps,
        "iso": xp.datetime_as_string(stamps, unit="s"),
        "epoch_ms": stamps.astype(xp.int64),
        "year_start": stamps.astype("datetime64[Y]"),
        "weekday": (stamps.astype("datetime64[D]").astype(xp.int64) + 4) % 7,
        "span": xp.arange("2024-02-27", "2024-03-02", dtype="datetime64[D]"),
    }
