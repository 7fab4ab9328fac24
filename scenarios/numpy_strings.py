"""NumPy string scenarios: np.char and np.strings operations on unicode and bytes arrays, with StringDType."""
import parity

_WORDS = ["alpha", " Beta ", "gamma-ray", "", "DELTA", "ëpsilon", "zeta zeta"]


@parity.scenario(rtol=0.0, params={"module": ["char", "strings"]}, tags=["numpy", "strings"])
def unicode_ops(xp, module):
    ops = getattr(xp, module)
    a = xp.asarray(_WORDS)
    return {
        "upper": ops.upper(a),
        "strip": ops.strip(a),
        "add": ops.add(a, "!"),
        "multiply": ops.multiply(a[:3], 2),
        "replace": ops.replace(a, "a", "4"),
        "find": ops.find(a, "a"),
        "count": ops.count(a, "a"),
        "startswith": ops.startswith(a, "g"),
        "str_len": ops.str_len(a),
        "isalpha": ops.isalpha(a),
        "center": ops.center(a, 11, "*"),
        "zfill": ops.zfill(xp.asarray(["7", "-42", "123"]), 5),
    }


@parity.scenario(rtol=0.0, params={"module": ["char", "strings"]}, tags=["numpy", "strings", "bytes"])
def bytes_ops(xp, module):
    ops = getattr(xp, module)
    b = xp.asarray([b"spam", b"Eggs", b"", b"ham and spam"])
    return {
        "lower": ops.lower(b),
        "swapcase": ops.swapcase(b),
        "encoded": ops.encode(xp.asarray(["naïve", "x"]), "utf-8"),
        "decoded": ops.decode(b, "ascii"),
        "equal": ops.equal(b, b"spam"),
        "ljust": ops.ljust(b, 6, b"."),
    }


@parity.scenario(rtol=0.0, tags=["numpy", "strings", "char"])
def char_only(xp):
    # np.char functions that return object arrays (split, join on lists) are turned into fixed-width strings.
    a = xp.asarray(["a,b,c", "de,f", "ghi"])
    return {
        "partition": xp.char.partition(a, ","),
        "join": xp.char.join("-", a),
        "title": xp.char.title(xp.asarray(["hello world", "numPy strings"])),
        "mod": xp.char.mod("%05.1f", xp.asarray([3.14159, -2.5])),
        "chararray": xp.char.array(["x ", "yy  "]).rstrip(),
        "compare": xp.char.compare_chararrays(a, xp.asarray(["a,b,c", "zz", "ghi"]), "==", True),
    }


@parity.scenario(rtol=0.0, tags=["numpy", "strings", "stringdtype"])
def string_dtype(xp):
    s = xp.asarray(["variable", "width", "strings", "ünïcode"], dtype=xp.dtypes.StringDType())
    return {
        "as_unicode": s.astype("U12"),
        "upper": xp.strings.upper(s).astype("U12"),
        "lengths": xp.strings.str_len(s),
        "slice": xp.strings.slice(s.astype("U12"), 1, 4),
        "sorted": xp.sort(s).astype("U12"),
    }
