"""SciPy linear-algebra scenarios: scipy.linalg decompositions, matrix functions and structured solvers on xp arrays."""
import parity
from parity import xfails
import scipy.linalg

# The library hands back plain ndarrays whatever xp made its inputs, so a proxy candidate's results are
# plain too: the type check accepts the gold type's subclasses instead of requiring the TYPE_MAP proxy.
PLAIN_RESULTS_OK = {"type": "subclass-ok"}

# Inputs are made with xp and passed to SciPy directly, as a proxy user would; diagonal dominance keeps the
# problems well conditioned so results agree to ~1e-12 across builds.


def _spd(xp, rng, n):
    m = xp.asarray(rng.standard_normal((n, n)))
    return m @ m.T + n * xp.eye(n)


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-10, atol=1e-12, params={"order": ["C", "F"]},
                 tags=["scipy", "linalg"])
def decompositions(xp, rng, order):
    a = xp.asarray(rng.standard_normal((8, 8)) + 8 * xp.eye(8), order=order)
    p, l, u = scipy.linalg.lu(a)
    lu, piv = scipy.linalg.lu_factor(a)
    c = scipy.linalg.cholesky(_spd(xp, rng, 8), lower=True)
    q, r = scipy.linalg.qr(a, mode="economic")
    return {"P": p, "L": l, "U": u, "lu": lu, "piv": piv, "chol": c, "R_abs": xp.abs(r),
            "solve": scipy.linalg.lu_solve((lu, piv), xp.arange(8.0))}


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-9, atol=1e-12, tags=["scipy", "linalg", "matfun"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout")}))
def matrix_functions(xp, rng):
    a = xp.asarray(rng.standard_normal((6, 6))) / 4.0
    s = _spd(xp, rng, 6)
    return {
        "expm": scipy.linalg.expm(a),
        "logm_of_expm": scipy.linalg.logm(scipy.linalg.expm(a)).real,
        "sqrtm": scipy.linalg.sqrtm(s).real,
        "inv": scipy.linalg.inv(s),
        "pinv": scipy.linalg.pinv(a[:, :4]),
        "det": float(scipy.linalg.det(s)),
        "eigvalsh": scipy.linalg.eigvalsh(s),
        "svdvals": scipy.linalg.svdvals(a),
    }


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-10, atol=1e-12, params={"lower": [False, True]},
                 tags=["scipy", "linalg", "solve"])
def structured_solvers(xp, rng, lower):
    n = 7
    t = xp.tril(xp.asarray(rng.standard_normal((n, n)))) + n * xp.eye(n)
    t = t if lower else t.T
    b = xp.asarray(rng.standard_normal((n, 2)))
    c = xp.asarray(rng.standard_normal(n))
    return {
        "triangular": scipy.linalg.solve_triangular(t, b, lower=lower),
        "toeplitz": scipy.linalg.solve_toeplitz((c + n, c[::-1] + n), b[:, 0]),
        "toeplitz_matrix": scipy.linalg.toeplitz(c[:4]),
        "circulant": scipy.linalg.circulant(c[:4]),
        "block_diag": scipy.linalg.block_diag(t[:2, :2], c[:3].reshape(1, 3)),
        "lstsq": scipy.linalg.lstsq(t[:, :3], b[:, 0])[0],
        "cho_solve": scipy.linalg.cho_solve(scipy.linalg.cho_factor(_spd(xp, rng, n), lower=lower), c),
    }
