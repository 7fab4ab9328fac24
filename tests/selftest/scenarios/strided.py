"""Stacked frames, as torch.stack makes them, sent whole and as a non-contiguous view (bug 3)."""
import parity


def _stacked(xp, rng):
    return xp.stack([rng.standard_normal((4, 6)) for _ in range(3)], axis=0)


@parity.scenario(tags=["selftest"])
def stacked_view(xp, rng):
    return {"view": _stacked(xp, rng)[:, 1:, :3]}  # 3-D, neither C- nor F-contiguous


@parity.scenario(tags=["selftest"])
def stacked_whole(xp, rng):
    return {"whole": _stacked(xp, rng)}


@parity.scenario(tags=["selftest"])
def strided_1d(xp):
    return {"every_other": xp.arange(10.0)[::2]}  # 1-D: the IPC path handles these
