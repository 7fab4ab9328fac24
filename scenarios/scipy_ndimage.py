"""SciPy ndimage scenarios: filters, morphology, labelling and geometric transforms on xp images."""
import parity
import scipy.ndimage

# The library hands back plain ndarrays whatever xp made its inputs, so a proxy candidate's results are
# plain too: the type check accepts the gold type's subclasses instead of requiring the TYPE_MAP proxy.
PLAIN_RESULTS_OK = {"type": "subclass-ok"}


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-10, atol=1e-12, params={"mode": ["reflect", "constant", "wrap"]},
                 tags=["scipy", "ndimage", "filter"])
def filters(xp, rng, mode):
    img = xp.asarray(rng.standard_normal((16, 12)))
    return {
        "gaussian": scipy.ndimage.gaussian_filter(img, sigma=1.5, mode=mode),
        "uniform": scipy.ndimage.uniform_filter(img, size=3, mode=mode),
        "median": scipy.ndimage.median_filter(img, size=3, mode=mode),
        "sobel": scipy.ndimage.sobel(img, axis=0, mode=mode),
        "laplace": scipy.ndimage.laplace(img, mode=mode),
        "maximum": scipy.ndimage.maximum_filter(img[::-1], size=(2, 4), mode=mode),
        "convolve": scipy.ndimage.convolve(img, xp.asarray([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]]), mode=mode),
    }


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-12, atol=1e-12, tags=["scipy", "ndimage", "morphology", "label"])
def labels_and_morphology(xp, rng):
    mask = xp.asarray(rng.random((14, 14)) > 0.6)
    labels, n = scipy.ndimage.label(mask)
    values = xp.asarray(rng.standard_normal((14, 14)))
    index = xp.arange(1, n + 1)
    return {
        "labels": labels,
        "n": int(n),
        "sizes": scipy.ndimage.sum_labels(mask, labels, index),
        "means": scipy.ndimage.mean(values, labels, index),
        "centers": xp.asarray(scipy.ndimage.center_of_mass(mask, labels, index[:3])),
        "eroded": scipy.ndimage.binary_erosion(mask),
        "dilated": scipy.ndimage.binary_dilation(mask, iterations=2),
        "filled": scipy.ndimage.binary_fill_holes(mask),
        "distance": scipy.ndimage.distance_transform_edt(mask),
    }


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-9, atol=1e-10, params={"order": [0, 1, 3]},
                 tags=["scipy", "ndimage", "interpolation"])
def geometric_transforms(xp, rng, order):
    img = xp.asarray(rng.standard_normal((10, 10)))
    return {
        "zoom": scipy.ndimage.zoom(img, 1.5, order=order),
        "rotate": scipy.ndimage.rotate(img, 30.0, reshape=False, order=order),
        "shift": scipy.ndimage.shift(img, (1.5, -2.25), order=order),
        "affine": scipy.ndimage.affine_transform(img, xp.asarray([[1.0, 0.2], [0.0, 0.9]]), order=order),
        "map_coordinates": scipy.ndimage.map_coordinates(img, xp.asarray([[0.5, 2.0, 7.25], [1.0, 3.5, 8.0]]), order=order),
    }
