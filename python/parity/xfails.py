"""How the bundled candidate backends genuinely differ from NumPy: one wording per difference, for strict xfails.

Scenarios declare these with parity.xfail_on, so each applies only under the backend that earns it:

    @parity.scenario(xfail=parity.xfail_on({"joblib": xfails.joblib("layout", "writeable")}))
"""
# joblib (fixtures/joblib.py) returns each scenario's outputs from its loky worker by pickling them.
JOBLIB = {
    "layout": ("joblib returns results by pickling them, and NumPy pickles a non-contiguous array (view, broadcast, "
               "reversed, transposed or field) as a C-contiguous copy"),
    "writeable": "joblib returns results by pickling them, and the unpickled copy of a read-only view is writeable",
    "dtype": ("joblib returns results by pickling them, and a big-endian array (non-contiguous, or a datetime) "
              "unpickles with native byte order"),
    "attrs": ("joblib returns results by pickling them: a masked array's mask, a view like its data, comes back as a "
              "C-contiguous copy"),
}
JOBLIB_FILL_VALUE = ("joblib returns results by pickling them, and unpickling a masked array casts its fill value "
                     "to the data's dtype: a float result that kept an int fill value comes back with a float one")
JOBLIB_FILL_VALUE_REPICKLED = ("joblib returns results by pickling them, and an unpickled masked array holds numpy.ma's "
                               "default fill value explicitly, an int64 whatever the data's dtype: pickling it once "
                               "more casts that fill value to the data's dtype")
JOBLIB_FILELESS_MEMMAP = ("joblib cannot bring back a np.memmap without a file from its worker: unpickling it fails "
                          "(BrokenProcessPool, 'A result has failed to un-serialize')")

# masked (fixtures/masked.py) runs scenarios on numpy.ma.
MASKED_MATMUL = ("numpy.ma: `@` of MaskedArrays with different shapes raises ValueError: MaskedArray.__array_wrap__ "
                 "ORs the operands' masks elementwise, and an (m, k) mask does not broadcast with a (k, n) one")


def joblib(*checks: str) -> dict:
    """The compare-pass xfail for the joblib backend's transport losses at `checks` (keys of JOBLIB)."""
    return {"compare": {check: JOBLIB[check] for check in checks}}
