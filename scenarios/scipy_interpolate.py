"""SciPy interpolation scenarios: 1-D interpolants, splines and scattered-data interpolation on seeded xp data."""
import parity
import scipy.interpolate

# The library hands back plain ndarrays whatever xp made its inputs, so a proxy candidate's results are
# plain too: the type check accepts the gold type's subclasses instead of requiring the TYPE_MAP proxy.
PLAIN_RESULTS_OK = {"type": "subclass-ok"}


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-10, atol=1e-12,
                 params={"kind": ["linear", "nearest", "cubic", "quadratic"]},
                 tags=["scipy", "interpolate"])
def interp1d(xp, rng, kind):
    x = xp.sort(xp.asarray(rng.uniform(0.0, 10.0, size=15)))
    y = xp.sin(x) + 0.1 * xp.asarray(rng.standard_normal(15))
    new = xp.linspace(x[0], x[-1], 21)
    f = scipy.interpolate.interp1d(x, y, kind=kind)
    return {"values": f(new), "np_interp": xp.interp(new, x, y), "grid": new}


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-9, atol=1e-11, tags=["scipy", "interpolate", "spline"])
def splines(xp, rng):
    x = xp.linspace(0.0, 2 * xp.pi, 20)
    y = xp.cos(x) + 0.05 * xp.asarray(rng.standard_normal(20))
    new = xp.linspace(0.0, 2 * xp.pi, 9)
    cs = scipy.interpolate.CubicSpline(x, y, bc_type="natural")
    pchip = scipy.interpolate.PchipInterpolator(x, y)
    akima = scipy.interpolate.Akima1DInterpolator(x, y)
    bspl = scipy.interpolate.make_interp_spline(x, y, k=3)
    tck = scipy.interpolate.splrep(x, y, s=0.1)
    smooth = scipy.interpolate.make_smoothing_spline(x, y, lam=0.01)
    return {
        "cubic": cs(new),
        "cubic_deriv": cs(new, 1),
        "cubic_coeffs": cs.c,
        "pchip": pchip(new),
        "akima": akima(new),
        "bspline": bspl(new),
        "bspline_knots": bspl.t,
        "splev": scipy.interpolate.splev(new, tck),
        "integral": float(cs.integrate(0.0, xp.pi)),
        "smoothing": smooth(new),
    }


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-9, atol=1e-11, params={"method": ["linear", "nearest", "cubic"]},
                 tags=["scipy", "interpolate", "scattered"])
def scattered(xp, rng, method):
    pts = xp.asarray(rng.random((40, 2)))
    vals = xp.sin(3 * pts[:, 0]) * xp.cos(2 * pts[:, 1])
    gx, gy = xp.meshgrid(xp.linspace(0.2, 0.8, 4), xp.linspace(0.2, 0.8, 3))
    grid = scipy.interpolate.griddata(pts, vals, (gx, gy), method=method)
    reg = scipy.interpolate.RegularGridInterpolator((xp.arange(4.0), xp.arange(3.0)), vals[:12].reshape(4, 3),
                                                    method="linear" if method == "cubic" else method)
    rbf = scipy.interpolate.RBFInterpolator(pts, vals, kernel="thin_plate_spline")
    return {"griddata": grid, "regular": reg(xp.asarray([[0.5, 0.5], [2.2, 1.7]])), "rbf": rbf(pts[:5] + 0.01)}
