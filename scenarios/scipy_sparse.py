"""SciPy sparse scenarios: sparse matrices and arrays built from xp data, operated on and returned as dense arrays."""
import parity
import scipy.sparse
import scipy.sparse.linalg

# The library hands back plain ndarrays whatever xp made its inputs, so a proxy candidate's results are
# plain too: the type check accepts the gold type's subclasses instead of requiring the TYPE_MAP proxy.
PLAIN_RESULTS_OK = {"type": "subclass-ok"}

# Sparse containers are not outputs; every result is densified (toarray) or a plain vector.


def _random_sparse(xp, rng, shape, density):
    dense = xp.asarray(rng.standard_normal(shape))
    return dense * xp.asarray(rng.random(shape) < density)


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-12, atol=1e-12, params={"fmt": ["csr", "csc", "coo", "lil"]},
                 tags=["scipy", "sparse"])
def formats_to_dense(xp, rng, fmt):
    dense = _random_sparse(xp, rng, (8, 6), 0.3)
    m = scipy.sparse.coo_array(dense).asformat(fmt)
    v = xp.asarray(rng.standard_normal(6))
    csr = m.tocsr()
    return {
        "roundtrip": m.toarray(),
        "F_order": m.toarray(order="F"),
        "matvec": m @ v,
        "gram": (m.T @ m).toarray(),
        "scaled_sum": (m * 2.0 + m).toarray(),
        "row_sums": xp.asarray(m.sum(axis=1)).ravel(),
        "nnz": int(m.nnz),
        "indptr": csr.indptr,
        "indices": csr.indices,
        "data": csr.data,
    }


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-9, atol=1e-11, tags=["scipy", "sparse", "linalg"])
def sparse_solve(xp, rng):
    n = 20
    main = 4.0 + xp.asarray(rng.random(n))
    off = -xp.ones(n - 1)
    a = scipy.sparse.diags_array([off, main, off], offsets=[-1, 0, 1], format="csc")
    b = xp.asarray(rng.standard_normal(n))
    x_cg, info = scipy.sparse.linalg.cg(a, b, rtol=1e-12, maxiter=500)
    return {
        "dense": a.toarray(),
        "spsolve": scipy.sparse.linalg.spsolve(a, b),
        "cg": x_cg,
        "cg_info": int(info),
        "kron": scipy.sparse.kron(scipy.sparse.eye_array(2), a[:3, :3]).toarray(),
        "norm": float(scipy.sparse.linalg.norm(a)),
        "stacked": scipy.sparse.vstack([a[:2], a[-2:]]).toarray(),
    }
