"""SciPy signal-processing scenarios: convolution, filtering, windows, spectra and peak finding on xp arrays."""
import parity
from parity import xfails
import scipy.signal

# The library hands back plain ndarrays whatever xp made its inputs, so a proxy candidate's results are
# plain too: the type check accepts the gold type's subclasses instead of requiring the TYPE_MAP proxy.
PLAIN_RESULTS_OK = {"type": "subclass-ok"}


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-9, atol=1e-11, params={"mode": ["full", "same", "valid"]},
                 tags=["scipy", "signal", "convolve"])
def convolution(xp, rng, mode):
    x = xp.asarray(rng.standard_normal(64))
    k = xp.asarray(rng.standard_normal(9))
    img = xp.asarray(rng.standard_normal((12, 10)))
    return {
        "direct": scipy.signal.convolve(x, k, mode=mode, method="direct"),
        "fft": scipy.signal.fftconvolve(x, k, mode=mode),
        "correlate": scipy.signal.correlate(x, k, mode=mode, method="direct"),
        "convolve2d": scipy.signal.convolve2d(img, k[:6].reshape(2, 3), mode=mode),
    }


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-8, atol=1e-10, params={"ftype": ["butter", "cheby1"]},
                 tags=["scipy", "signal", "filter"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout")}))
def iir_filtering(xp, rng, ftype):
    t = xp.linspace(0.0, 1.0, 200)
    x = xp.sin(2 * xp.pi * 5 * t) + 0.3 * xp.asarray(rng.standard_normal(200))
    kwargs = {"rp": 1.0} if ftype == "cheby1" else {}
    b, a = scipy.signal.iirfilter(4, 0.1, btype="low", ftype=ftype, **kwargs)
    sos = scipy.signal.iirfilter(4, 0.1, btype="low", ftype=ftype, output="sos", **kwargs)
    return {
        "b": b,
        "a": a,
        "lfilter": scipy.signal.lfilter(b, a, x),
        "filtfilt": scipy.signal.filtfilt(b, a, x),
        "sosfilt": scipy.signal.sosfilt(sos, x),
        "freqz": xp.abs(scipy.signal.freqz(b, a, worN=16)[1]),
    }


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-8, atol=1e-10, tags=["scipy", "signal", "spectral"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout")}))
def spectra_and_peaks(xp, rng):
    fs = 100.0
    t = xp.arange(256) / fs
    x = xp.sin(2 * xp.pi * 12 * t) + 0.5 * xp.sin(2 * xp.pi * 30 * t) + 0.1 * xp.asarray(rng.standard_normal(256))
    f, pxx = scipy.signal.welch(x, fs=fs, nperseg=64)
    peaks, props = scipy.signal.find_peaks(x, height=0.5, distance=3)
    return {
        "freqs": f,
        "psd": pxx,
        "periodogram": scipy.signal.periodogram(x, fs=fs)[1],
        "peaks": peaks,
        "peak_heights": props["peak_heights"],
        "hann": scipy.signal.get_window("hann", 16),
        "kaiser": scipy.signal.windows.kaiser(9, beta=5.0),
        "detrended": scipy.signal.detrend(x[:32]),
        "resampled": scipy.signal.resample(x[:64], 32),
        "medfilt": scipy.signal.medfilt(x[:40], 5),
    }
