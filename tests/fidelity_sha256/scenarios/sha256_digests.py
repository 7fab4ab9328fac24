"""The scenario whose runs by parity before XXH3-128 digests are kept beside it (tests/fidelity_sha256)."""
import parity


@parity.scenario(tags=["fidelity"])
def arrays(xp):
    # 64 KiB each: the pickle references them by path and whole digest (probe._REFERENCED) rather than copying them.
    return {"c": xp.arange(8192, dtype="f8"), "be": xp.arange(8192, dtype=">f8") / 3, "small": xp.arange(3),
            "label": "sha256"}
