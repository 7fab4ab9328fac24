"""NumPy polynomial scenarios: Polynomial/Chebyshev least-squares fits, roots and calculus on seeded data."""
import parity

# Polynomial series are classes a proxy passes through unwrapped, so their coefficient arrays are plain
# ndarrays under a proxy candidate too: the type check accepts the gold type's subclasses.
SERIES_RESULTS = {"type": "subclass-ok"}

# Fits solve a small least-squares problem; different BLAS builds agree to ~1e-12 on these well-conditioned cases.


@parity.scenario(policy=SERIES_RESULTS, rtol=1e-9, atol=1e-10, params={"deg": [1, 2, 5]},
                 tags=["numpy", "polynomial", "fit"])
def polynomial_fit(xp, rng, deg):
    x = xp.linspace(-1.0, 1.0, 40)
    y = 1.5 - 2.0 * x + 0.5 * x**3 + xp.asarray(rng.normal(0.0, 0.05, size=40))
    p = xp.polynomial.Polynomial.fit(x, y, deg)
    coef, (resid, rank, sv, rcond) = xp.polynomial.polynomial.polyfit(x, y, deg, full=True)
    return {
        "coef_window": p.coef,
        "coef": p.convert().coef,
        "domain": p.domain,
        "values": p(xp.asarray([-0.9, 0.0, 0.3, 1.0])),
        "polyfit": coef,
        "residual": resid,
        "rank": int(rank),
        "singular_values": sv,
    }


@parity.scenario(policy=SERIES_RESULTS, rtol=1e-9, atol=1e-10, tags=["numpy", "polynomial", "roots"])
def roots_and_calculus(xp, rng):
    r = xp.sort(xp.asarray(rng.uniform(-3.0, 3.0, size=4)))
    p = xp.polynomial.Polynomial.fromroots(r)
    complex_p = xp.polynomial.Polynomial([1.0, 0.0, 1.0])  # roots +-1j
    return {
        "seed_roots": r,
        "roots": xp.sort(p.roots()),
        "coef": p.coef,
        "deriv": p.deriv(2).coef,
        "integ": p.integ(lbnd=-1.0).coef,
        "complex_roots": xp.sort_complex(complex_p.roots()),
        "legacy_roots": xp.sort(xp.roots(xp.asarray([1.0, -6.0, 11.0, -6.0]))),
        "polyval": xp.polyval(xp.asarray([2.0, -1.0, 0.5]), xp.asarray([[0.0, 1.0], [2.0, 3.0]])),
    }


@parity.scenario(policy=SERIES_RESULTS, rtol=1e-9, atol=1e-10, params={"kind": ["Chebyshev", "Legendre", "Hermite"]},
                 tags=["numpy", "polynomial", "fit"])
def orthogonal_bases(xp, rng, kind):
    x = xp.linspace(-1.0, 1.0, 30)
    y = xp.exp(x) + xp.asarray(rng.normal(0.0, 0.01, size=30))
    series = getattr(xp.polynomial, kind).fit(x, y, 4)
    return {"coef": series.coef, "values": series(x[::5]), "as_power": series.convert(kind=xp.polynomial.Polynomial).coef}
