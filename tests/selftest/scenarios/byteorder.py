"""Big-endian outputs on both sides of joblib's max_nbytes (bug 2): only the large one takes the memmap path."""
import parity


@parity.scenario(tags=["selftest"])
def big_endian_large(xp):
    return {"be": xp.arange(600_000, dtype=">f8").reshape(200_000, 3)}  # 4.8 MB, as in the joblib report


@parity.scenario(tags=["selftest"])
def big_endian_small(xp):
    return {"be": xp.arange(6, dtype=">f8").reshape(2, 3)}


@parity.scenario(tags=["selftest"])
def native_large(xp):
    return {"le": xp.arange(600_000, dtype="<f8").reshape(200_000, 3)}
