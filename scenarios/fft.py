"""FFT scenarios: complex and real transforms, 2-D and n-D transforms, normalizations and round trips."""
import parity

# FFT error grows like log(n) * eps * max|X|, so near-zero coefficients need an absolute tolerance.


@parity.scenario(rtol=1e-10, atol=1e-10, params={"n": [64, 100, 127]}, tags=["numpy", "fft"])
def complex_roundtrip(xp, rng, n):
    x = xp.asarray(rng.standard_normal(n) + 1j * rng.standard_normal(n))
    spectrum = xp.fft.fft(x)
    return {
        "fft": spectrum,
        "roundtrip": xp.fft.ifft(spectrum),
        "ortho": xp.fft.fft(x, norm="ortho"),
        "forward": xp.fft.ifft(x, norm="forward"),
        "padded": xp.fft.fft(x, n=2 * n),
        "truncated": xp.fft.fft(x, n=n // 2),
        "freq": xp.fft.fftfreq(n, d=0.1),
        "shifted": xp.fft.fftshift(spectrum),
    }


@parity.scenario(rtol=1e-10, atol=1e-10, params={"n": [64, 99]}, tags=["numpy", "fft", "real"])
def real_transforms(xp, rng, n):
    x = xp.asarray(rng.standard_normal(n))
    half = xp.fft.rfft(x)
    return {
        "rfft": half,  # n // 2 + 1 coefficients
        "irfft": xp.fft.irfft(half, n=n),
        "irfft_default_n": xp.fft.irfft(half),  # 2 * (len - 1): differs from n when n is odd
        "rfftfreq": xp.fft.rfftfreq(n),
        "hfft": xp.fft.hfft(half[:8]),
        "ihfft": xp.fft.ihfft(x),
        "power": xp.abs(half) ** 2,
    }


@parity.scenario(rtol=1e-10, atol=1e-10, params={"order": ["C", "F"]}, tags=["numpy", "fft", "2d"])
def multidimensional(xp, rng, order):
    a = xp.asarray(rng.standard_normal((16, 24)), order=order)
    spectrum = xp.fft.fft2(a)
    return {
        "fft2": spectrum,
        "ifft2": xp.fft.ifft2(spectrum),
        "rfft2": xp.fft.rfft2(a),
        "irfft2": xp.fft.irfft2(xp.fft.rfft2(a), s=a.shape),
        "fft_axis0": xp.fft.fft(a, axis=0),
        "fftn_last": xp.fft.fftn(a[::2, ::-1], axes=(1,)),
        "ifftshift": xp.fft.ifftshift(spectrum, axes=0),
    }


@parity.scenario(rtol=1e-4, atol=1e-4, tags=["numpy", "fft", "single"])
def single_precision(xp, rng):
    # NumPy 2 keeps float32 and complex64 in single precision instead of upcasting.
    x = xp.asarray(rng.standard_normal(128), dtype=xp.float32)
    z = xp.asarray(rng.standard_normal(64) + 1j * rng.standard_normal(64), dtype=xp.complex64)
    return {
        "rfft": xp.fft.rfft(x),
        "fft": xp.fft.fft(z),
        "roundtrip": xp.fft.ifft(xp.fft.fft(z)),
        "irfft": xp.fft.irfft(xp.fft.rfft(x), n=128),
    }
