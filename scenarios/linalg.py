"""Linear algebra scenarios: products, solves, inverses, determinants, decompositions and norms."""
import parity
from parity import xfails

MASKED_MATMUL = {"masked": {"candidate": xfails.MASKED_MATMUL}}  # numpy.ma only (see parity.xfail_on)


# Decompositions are compared through quantities that are unique (eigenvalues, singular values,
# reconstructions, absolute values of vectors): a GPU library may legitimately flip signs of vectors.


@parity.scenario(rtol=1e-10, atol=1e-10, params={"order": ["C", "F"]}, tags=["numpy", "linalg", "matmul"],
                 xfail=parity.xfail_on(MASKED_MATMUL))
def products(xp, rng, order):
    a = xp.asarray(rng.standard_normal((64, 32)), order=order)
    b = xp.asarray(rng.standard_normal((32, 48)), order=order)
    batch = xp.asarray(rng.standard_normal((3, 8, 5)), order=order)
    v = xp.asarray(rng.standard_normal(32))
    return {
        "ab": a @ b,
        "a_at": a @ a.T,
        "strided": a[::2] @ b[:, ::3],
        "batched": batch @ batch.transpose(0, 2, 1),
        "matvec": a @ v,
        "dot": xp.dot(v, v),
        "inner": xp.inner(a[:4], a[4:8]),
        "einsum": xp.einsum("ij,jk->ik", a[:8], b),
        "tensordot": xp.tensordot(batch, batch, axes=([1, 2], [1, 2])),
        "kron": xp.kron(a[:2, :2], b[:2, :3]),
    }


@parity.scenario(rtol=1e-4, atol=1e-4, params={"dtype": ["float32", "complex64"]}, tags=["numpy", "linalg", "matmul", "single"],
                 xfail=parity.xfail_on(MASKED_MATMUL))
def products_single(xp, rng, dtype):
    a = xp.asarray(rng.standard_normal((48, 40)), dtype=dtype)
    if a.dtype.kind == "c":
        a = a + xp.asarray(rng.standard_normal((48, 40)), dtype=dtype) * xp.complex64(1j)
    return {"a_ah": a @ a.conj().T, "vdot": xp.vdot(a[0], a[1]), "ata_diag": xp.diagonal(a.T @ a).copy()}


@parity.scenario(rtol=1e-10, atol=1e-10, tags=["numpy", "linalg", "complex"], xfail=parity.xfail_on(MASKED_MATMUL))
def products_complex(xp, rng):
    a = xp.asarray(rng.standard_normal((24, 16)) + 1j * rng.standard_normal((24, 16)))
    return {"a_ah": a @ a.conj().T, "vdot": xp.vdot(a[0], a[1]), "outer": xp.outer(a[0], a[1, :4])}


@parity.scenario(rtol=1e-10, atol=1e-10, params={"n": [4, 32]}, tags=["numpy", "linalg", "solve"],
                 xfail=parity.xfail_on(MASKED_MATMUL))
def solve_inv_det(xp, rng, n):
    # A dominant diagonal keeps the condition number small, so every library agrees to ~1e-13.
    a = xp.asarray(rng.standard_normal((n, n))) + n * xp.eye(n)
    b = xp.asarray(rng.standard_normal((n, 3)))
    x = xp.linalg.solve(a, b)
    sign, logdet = xp.linalg.slogdet(a)
    return {
        "solve": x,
        "solve_vector": xp.linalg.solve(a, b[:, 0]),
        "residual": a @ x - b,
        "inv": xp.linalg.inv(a),
        "det": xp.linalg.det(a),
        "slogdet": (sign, logdet),
        "lstsq": xp.linalg.lstsq(a[:, : n // 2], b, rcond=None)[0],
        "pinv": xp.linalg.pinv(a[:, : n // 2]),
        "matrix_power": xp.linalg.matrix_power(a / n, 3),
    }


@parity.scenario(rtol=1e-4, atol=1e-5, tags=["numpy", "linalg", "solve", "float32"])
def solve_float32(xp, rng):
    a = xp.asarray(rng.standard_normal((16, 16)) + 16 * xp.eye(16), dtype=xp.float32)
    b = xp.asarray(rng.standard_normal(16), dtype=xp.float32)
    return {"solve": xp.linalg.solve(a, b), "inv": xp.linalg.inv(a), "det": xp.linalg.det(a)}


@parity.scenario(rtol=1e-9, atol=1e-10, params={"dtype": ["float64", "complex128"]}, tags=["numpy", "linalg", "eigh"])
def eigh(xp, rng, dtype):
    m = xp.asarray(rng.standard_normal((16, 16)), dtype=dtype)
    if m.dtype.kind == "c":
        m = m + 1j * xp.asarray(rng.standard_normal((16, 16)))
    h = (m + m.conj().T) / 2
    w, v = xp.linalg.eigh(h)
    return {
        "eigenvalues": w,
        "eigvalsh": xp.linalg.eigvalsh(h),
        "reconstruction": (v * w) @ v.conj().T,
        "abs_vectors": xp.abs(v),
        "orthogonality": v.conj().T @ v,
    }


@parity.scenario(rtol=1e-9, atol=1e-10, params={"order": ["C", "F"]}, tags=["numpy", "linalg", "svd", "qr"],
                 xfail=parity.xfail_on(MASKED_MATMUL))
def svd_qr(xp, rng, order):
    a = xp.asarray(rng.standard_normal((48, 24)), order=order)
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    q, r = xp.linalg.qr(a)
    return {
        "singular_values": s,
        "svdvals": xp.linalg.svd(a, compute_uv=False),
        "svd_reconstruction": (u * s) @ vh,
        "abs_u": xp.abs(u),
        "qr_reconstruction": q @ r,
        "abs_r_diagonal": xp.abs(xp.diagonal(r)),
        "q_orthogonality": q.T @ q,
        "r_is_upper": bool(xp.allclose(xp.tril(r, -1), 0.0)),
        "rank": int(xp.linalg.matrix_rank(a)),
        "cond": float(xp.linalg.cond(a)),
    }


@parity.scenario(rtol=1e-10, atol=1e-12, tags=["numpy", "linalg", "norm"])
def norms(xp, rng):
    a = xp.asarray(rng.standard_normal((20, 15)))
    v = a[3]
    return {
        "fro": xp.linalg.norm(a),
        "fro_float": float(xp.linalg.norm(a, "fro")),
        "nuc": xp.linalg.norm(a, "nuc"),
        "one": xp.linalg.norm(a, 1),
        "inf": xp.linalg.norm(a, xp.inf),
        "two": xp.linalg.norm(a, 2),
        "rows": xp.linalg.norm(a, axis=1),
        "cols_keep": xp.linalg.norm(a, ord=1, axis=0, keepdims=True),
        "vector_3": xp.linalg.norm(v, 3),
        "vector_inf": xp.linalg.norm(v, -xp.inf),
        "trace": xp.trace(a[:15]),
    }
