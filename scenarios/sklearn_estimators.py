"""scikit-learn scenarios: fit/predict/transform of common estimators on seeded xp data, returning their arrays."""
import parity
from parity import xfails
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import MinMaxScaler, PolynomialFeatures, StandardScaler

# The library hands back plain ndarrays whatever xp made its inputs, so a proxy candidate's results are
# plain too: the type check accepts the gold type's subclasses instead of requiring the TYPE_MAP proxy.
PLAIN_RESULTS_OK = {"type": "subclass-ok"}

# Data is made with xp and handed to scikit-learn directly, as a proxy user would. Estimators are
# deterministic (closed-form solvers, or random_state=0), so only floating-point order differs.


def _data(xp, rng, n=60, d=4, order="C"):
    x = xp.asarray(rng.standard_normal((n, d)) * xp.asarray([1.0, 3.0, 0.5, 2.0])[:d] + 1.0, order=order)
    y = x @ xp.asarray([2.0, -1.0, 0.5, 0.0])[:d] + 0.1 * xp.asarray(rng.standard_normal(n))
    return x, y


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-10, atol=1e-12,
                 params={"scaler": ["standard", "minmax", "poly"], "order": ["C", "F"]},
                 tags=["sklearn", "preprocessing"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout")}, when={"scaler": ["poly"]}))
def transformers(xp, rng, scaler, order):
    x, _ = _data(xp, rng, order=order)
    est = {"standard": StandardScaler(), "minmax": MinMaxScaler(), "poly": PolynomialFeatures(degree=2)}[scaler]
    out = est.fit_transform(x)
    return {"transformed": out, "inverse": est.inverse_transform(out) if scaler != "poly" else out[:, :5],
            "new": est.transform(x[:3] * 2.0)}


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-8, atol=1e-10, params={"n_components": [2, 3]},
                 tags=["sklearn", "decomposition"])
def pca(xp, rng, n_components):
    x, _ = _data(xp, rng)
    p = PCA(n_components=n_components, svd_solver="full")
    scores = p.fit_transform(x)
    # Component signs are fixed by scikit-learn's svd_flip, so they are comparable too.
    return {"scores": scores, "components": p.components_, "explained_variance_ratio": p.explained_variance_ratio_,
            "mean": p.mean_, "reconstructed": p.inverse_transform(scores)}


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-8, atol=1e-10, params={"model": ["linear", "ridge"]},
                 tags=["sklearn", "regression"])
def regressions(xp, rng, model):
    x, y = _data(xp, rng)
    est = LinearRegression() if model == "linear" else Ridge(alpha=1.0)
    est.fit(x, y)
    return {"coef": est.coef_, "intercept": float(est.intercept_), "predict": est.predict(x[:10]),
            "score": float(est.score(x, y))}


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-6, atol=1e-8, tags=["sklearn", "classification"])
def classifiers(xp, rng):
    x, y = _data(xp, rng)
    labels = (y > xp.median(y)).astype(xp.int64)
    logit = LogisticRegression(C=1.0, tol=1e-10, max_iter=1000).fit(x, labels)
    knn = KNeighborsClassifier(n_neighbors=5).fit(x, labels)
    dist, idx = knn.kneighbors(x[:4])
    return {"logit_coef": logit.coef_, "logit_proba": logit.predict_proba(x[:8]), "logit_pred": logit.predict(x),
            "knn_pred": knn.predict(x[:12]), "knn_dist": dist, "knn_idx": idx}


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-8, atol=1e-10, params={"n_init": [1, 4]}, tags=["sklearn", "cluster"])
def kmeans(xp, rng, n_init):
    centers = xp.asarray([[0.0, 0.0], [5.0, 5.0], [0.0, 6.0]])
    x = xp.concatenate([c + xp.asarray(rng.standard_normal((20, 2))) for c in centers])
    km = KMeans(n_clusters=3, n_init=n_init, random_state=0).fit(x)
    return {"labels": km.labels_, "centers": km.cluster_centers_, "inertia": float(km.inertia_),
            "predict": km.predict(centers), "transform": km.transform(x[:5])}
