"""NumPy random scenarios: draws from the seeded Generator for many distributions, and seeded legacy/bit generators."""
import parity

# Draws come from `rng` (seeded per scenario id), so gold and candidate see the same numbers; xp.asarray
# hands them to the backend, whose arithmetic on them is then compared.

_DRAWS = {
    "normal": lambda rng: rng.normal(2.0, 3.0, size=(4, 5)),
    "uniform": lambda rng: rng.uniform(-1.0, 1.0, size=20),
    "integers": lambda rng: rng.integers(-1000, 1000, size=(3, 7), dtype="int32"),
    "poisson": lambda rng: rng.poisson(3.5, size=30),
    "binomial": lambda rng: rng.binomial(10, 0.3, size=(5, 4)),
    "exponential": lambda rng: rng.exponential(2.0, size=16).astype("float32"),
    "gamma": lambda rng: rng.gamma(2.0, 1.5, size=(2, 3, 4)),
    "beta": lambda rng: rng.beta(0.5, 2.0, size=12),
    "choice": lambda rng: rng.choice(50, size=10, replace=False),
    "permutation": lambda rng: rng.permutation(24).reshape(4, 6),
    "multivariate_normal": lambda rng: rng.multivariate_normal([0.0, 1.0], [[1.0, 0.5], [0.5, 2.0]], size=8, method="cholesky"),
    "dirichlet": lambda rng: rng.dirichlet([1.0, 2.0, 3.0], size=5),
}


@parity.scenario(rtol=1e-12, atol=1e-12, params={"dist": list(_DRAWS)}, tags=["numpy", "random"])
def distributions(xp, rng, dist):
    draws = xp.asarray(_DRAWS[dist](rng))
    return {
        "draws": draws,
        "sorted": xp.sort(draws, axis=None),
        "mean": xp.mean(draws, axis=0),
        "cumsum": xp.cumsum(draws, axis=-1),
    }


@parity.scenario(rtol=0.0, params={"bitgen": ["PCG64", "Philox", "SFC64", "MT19937"]}, tags=["numpy", "random", "seed"])
def fixed_seed_generators(xp, bitgen):
    # A fixed seed per bit generator: the streams are specified exactly, on every platform.
    gen = xp.random.Generator(getattr(xp.random, bitgen)(12345))
    return {
        "random": xp.asarray(gen.random(6)),
        "integers": xp.asarray(gen.integers(0, 2**40, size=4)),
        "shuffled": xp.asarray(gen.permuted(xp.arange(10))),
        "state_next": int(gen.bit_generator.random_raw()),
    }


@parity.scenario(rtol=0.0, tags=["numpy", "random", "seed", "legacy"])
def legacy_random_state(xp):
    state = xp.random.RandomState(2024)
    return {
        "rand": xp.asarray(state.rand(3, 2)),
        "randint": xp.asarray(state.randint(0, 100, size=8)),
        "randn": xp.asarray(state.randn(5)),
        "seed_sequence": xp.asarray(xp.random.SeedSequence(7).generate_state(4)),
    }
