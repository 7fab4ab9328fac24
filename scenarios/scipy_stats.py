"""SciPy stats scenarios: descriptive statistics, distribution functions, tests and ranks on seeded xp samples."""
import parity
import scipy.stats

# The library hands back plain ndarrays whatever xp made its inputs, so a proxy candidate's results are
# plain too: the type check accepts the gold type's subclasses instead of requiring the TYPE_MAP proxy.
PLAIN_RESULTS_OK = {"type": "subclass-ok"}


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-10, atol=1e-12, params={"axis": [0, 1]},
                 tags=["scipy", "stats", "descriptive"])
def descriptive(xp, rng, axis):
    a = xp.asarray(rng.gamma(2.0, 1.0, size=(30, 4)))
    d = scipy.stats.describe(a, axis=axis)
    return {
        "nobs": int(d.nobs),
        "minmax": xp.stack(d.minmax),
        "mean": d.mean,
        "variance": d.variance,
        "skewness": d.skewness,
        "kurtosis": d.kurtosis,
        "zscore": scipy.stats.zscore(a, axis=axis),
        "iqr": scipy.stats.iqr(a, axis=axis),
        "trim_mean": scipy.stats.trim_mean(a, 0.1, axis=axis),
        "mode": scipy.stats.mode(xp.round(a), axis=axis).mode,
    }


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-10, atol=1e-14, params={"dist": ["norm", "gamma", "t", "poisson"]},
                 tags=["scipy", "stats", "distributions"])
def distribution_functions(xp, dist):
    frozen = {"norm": scipy.stats.norm(1.0, 2.0), "gamma": scipy.stats.gamma(2.5), "t": scipy.stats.t(4),
              "poisson": scipy.stats.poisson(3.0)}[dist]
    x = xp.linspace(0.0, 6.0, 13)
    q = xp.asarray([0.01, 0.25, 0.5, 0.75, 0.99])
    out = {"cdf": frozen.cdf(x), "sf": frozen.sf(x), "ppf": frozen.ppf(q), "stats": xp.asarray(frozen.stats(moments="mv"))}
    out["density"] = frozen.pmf(xp.round(x)) if dist == "poisson" else frozen.pdf(x)
    out["samples"] = frozen.rvs(size=6, random_state=0)  # a fixed seed: reproducible draws
    return out


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-9, atol=1e-12, tags=["scipy", "stats", "tests"])
def hypothesis_tests(xp, rng):
    a = xp.asarray(rng.normal(0.0, 1.0, size=40))
    b = xp.asarray(rng.normal(0.4, 1.2, size=35))
    ttest = scipy.stats.ttest_ind(a, b, equal_var=False)
    ks = scipy.stats.ks_2samp(a, b)
    mw = scipy.stats.mannwhitneyu(a, b)
    pearson = scipy.stats.pearsonr(a[:35], b)
    spearman = scipy.stats.spearmanr(a[:35], b)
    fit = scipy.stats.linregress(a[:35], b)
    return {
        "ttest": [float(ttest.statistic), float(ttest.pvalue)],
        "ks": [float(ks.statistic), float(ks.pvalue)],
        "mannwhitney": [float(mw.statistic), float(mw.pvalue)],
        "pearson": [float(pearson.statistic), float(pearson.pvalue)],
        "spearman": [float(spearman.statistic), float(spearman.pvalue)],
        "linregress": xp.asarray([fit.slope, fit.intercept, fit.rvalue]),
        "rankdata": scipy.stats.rankdata(xp.round(a * 2), method="average"),
        "percentileofscore": float(scipy.stats.percentileofscore(a, 0.5)),
        "kde": scipy.stats.gaussian_kde(a)(xp.linspace(-2.0, 2.0, 5)),
    }
