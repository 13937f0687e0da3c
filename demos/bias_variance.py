"""
bias_variance.py — the expected test error of polynomial regression splits into
bias² + variance + noise, checked over 10 000 resampled training sets.

Purpose
-------
The *bias–variance decomposition* says that, at a test input x, the squared error
of a model fitted to a random training set, averaged over training sets and over
the noise of the test target, is exactly

    E[(y - f̂(x))²] = (E f̂(x) - f(x))²  +  Var f̂(x)  +  σ²
                    =       bias²       +  variance  +  noise.

Bias is what the model class cannot represent even with infinitely many training
sets; variance is how much the fit moves from one training set to the next; the
noise σ² is the floor no model can beat.  Raising the polynomial degree trades
the first for the second, so the test error is U-shaped in the degree.  The demo
fits polynomials of degree 0 to 12 to noisy samples of a known function, measures
each term by brute force over many training sets, checks that they add up to the
independently measured test error, and checks them against their closed forms.

Model
-----
Truth f(x) = sin(2πx) on [0, 1]; a training set is n = 20 inputs, equally spaced
and the same for every set (a *fixed design*, as in Hastie, Tibshirani and
Friedman, *The Elements of Statistical Learning*, §7.3), with targets
y = f(x) + ε, ε ~ N(0, σ²), σ = 0.4, the noise drawn afresh for each set.  Each
set is fitted by ordinary least squares.  Test targets at 101 grid points get
noise of their own, independent of the training sets.

Least squares is linear in the targets, f̂(x₀) = Σⱼ Lⱼ(x₀) yⱼ, so bias and
variance also have closed forms: bias = Σⱼ Lⱼ(x₀) f(xⱼ) - f(x₀) and
variance = σ² Σⱼ Lⱼ(x₀)².

Blocks
------
[B-data]       the true function, the fixed training inputs, 10 000 training
               sets of noisy targets and independent noisy test targets
[B-decompose]  fit every degree to every training set; bias² + variance + noise
               matches the measured test error within 1 % at every degree
[B-exact]      the closed forms of bias² and variance agree with the
               brute-force estimates; at the training inputs the average
               variance is exactly σ²·(degree + 1)/n
[B-tradeoff]   variance never decreases with the degree, bias² falls (at odd
               degrees only, the target being odd), and the test error is
               lowest at an intermediate degree, 3
[B-csv]        the per-degree table the entry's figure reads
[B-preview]    the matplotlib preview: the decomposition against the degree,
               and sample fits of an underfitting, the best and an
               overfitting degree

Outputs
-------
  bias_variance_by_degree.csv — columns: degree, bias2, variance, noise,
        sum, test_error (Monte-Carlo estimates), bias2_exact, variance_exact
        (closed forms); all averaged over the 101 test inputs
  bias_variance.png           — matplotlib preview (decomposition + sample fits)
"""

import numpy as np
import matplotlib.pyplot as plt
from numpy.polynomial import legendre
from pathlib import Path

OUT_DIR = Path(".")
# One generator with a fixed seed draws all the noise, so every printed number
# and the committed figure are reproducible run after run.
rng = np.random.default_rng(0)

# %% B-data
def f(x):
    # The true regression function: smooth, but no low-degree polynomial.
    return np.sin(2 * np.pi * x)

SIGMA = 0.4           # standard deviation of the target noise
N_TRAIN = 20          # training points per training set
N_SETS = 10_000       # training sets to average over
DEGREES = np.arange(13)

# Fixed design: the inputs are the same in every training set, only the noise
# changes.  Midpoints of 20 equal cells keep the points off the interval ends.
x_train = (np.arange(N_TRAIN) + 0.5) / N_TRAIN
x_test = np.linspace(0.0, 1.0, 101)

# Column s of Y_train is training set s; column s of Y_test holds the noisy test
# targets that training set s is scored on, drawn independently of it.
Y_train = f(x_train)[:, None] + SIGMA * rng.standard_normal((N_TRAIN, N_SETS))
Y_test = f(x_test)[:, None] + SIGMA * rng.standard_normal((x_test.size, N_SETS))
print(f"[B-data] {N_SETS} training sets of {N_TRAIN} points, noise σ² = {SIGMA**2:.2f}, "
      f"{x_test.size} test inputs")

# %% B-decompose
def design(x, degree):
    # Legendre polynomials on [-1, 1] span the same space as 1, x, ..., x^degree,
    # so the fitted curves are identical, but their design matrix is far better
    # conditioned than the monomials' at degree 12.
    return legendre.legvander(2 * x - 1, degree)

SAMPLE_SETS = 20      # fits kept per degree for the preview figure
rows = []
sample_fits = {}
for degree in DEGREES:
    # The least-squares coefficients are A⁺y, A⁺ the pseudo-inverse of the design
    # matrix.  The training sets share A, so one product fits all 10 000 of them.
    coef = np.linalg.pinv(design(x_train, degree)) @ Y_train
    pred = design(x_test, degree) @ coef          # (101 test inputs, N_SETS)
    # A copy, so that the full 101 × 10 000 array can be freed after this degree.
    sample_fits[degree] = pred[:, :SAMPLE_SETS].copy()

    # Each term is averaged over the test inputs: bias² from the average fit,
    # variance from the spread of the fits around it, noise known by design.
    bias2 = np.mean((pred.mean(axis=1) - f(x_test)) ** 2)
    variance = np.mean(pred.var(axis=1))
    noise = SIGMA**2
    # The test error is measured directly against fresh noisy targets; it uses
    # none of the three terms, so their sum matching it is a real check.
    test_error = np.mean((Y_test - pred) ** 2)
    total = bias2 + variance + noise
    gap = abs(total - test_error) / test_error
    print(f"[B-decompose] degree {degree:2d}: bias² {bias2:.5f} + variance {variance:.5f} "
          f"+ noise {noise:.5f} = {total:.5f}, measured test error {test_error:.5f} "
          f"(gap {100 * gap:.2f} %)")
    # With finitely many sets the cross terms average to nearly, not exactly, zero.
    assert gap < 0.01, f"decomposition off by {100 * gap:.2f} % at degree {degree}"
    rows.append((degree, bias2, variance, noise, total, test_error))

table = np.array(rows)
bias2_mc, variance_mc, test_error_mc = table[:, 1], table[:, 2], table[:, 5]

# %% B-exact
bias2_exact, variance_exact, variance_in_sample = [], [], []
for degree in DEGREES:
    A = design(x_train, degree)
    A_pinv = np.linalg.pinv(A)
    # The smoother matrix L maps training targets to predictions at the test
    # inputs, f̂(x_test) = L @ y, so bias and variance follow from it exactly.
    L = design(x_test, degree) @ A_pinv
    bias2_exact.append(np.mean((L @ f(x_train) - f(x_test)) ** 2))
    variance_exact.append(np.mean(SIGMA**2 * (L**2).sum(axis=1)))
    # At the training inputs L becomes the hat matrix H = A A⁺.
    H = A @ A_pinv
    variance_in_sample.append(np.mean(SIGMA**2 * (H**2).sum(axis=1)))
bias2_exact, variance_exact = np.array(bias2_exact), np.array(variance_exact)

# H is a projection onto a space of dimension degree + 1, so Σᵢⱼ Hᵢⱼ² = trace(H)
# = degree + 1: measured in units of σ²/n, the average in-sample variance counts
# the parameters.  Each one costs σ²/n, whether it helps the fit or not.
parameters = np.array(variance_in_sample) / (SIGMA**2 / N_TRAIN)
print("[B-exact] in-sample variance in units of σ²/n: "
      + ", ".join(f"{p:.3f}" for p in parameters))
assert np.allclose(parameters, DEGREES + 1)

# 10 000 sets estimate a variance to about 1.4 % (√(2/10 000)); the brute-force
# bias² also carries an extra variance/10 000 from averaging finitely many fits.
variance_err = np.max(np.abs(variance_mc / variance_exact - 1))
bias2_err = np.max(np.abs(bias2_mc - bias2_exact))
print(f"[B-exact] brute force vs closed form: variance within {100 * variance_err:.1f} %, "
      f"bias² within {bias2_err:.5f}")
assert variance_err < 0.05 and bias2_err < 1e-3

# %% B-tradeoff
# Adding a column to a least-squares design can only raise the variance of the
# prediction at any input, so the exact variance is non-decreasing in the degree.
assert np.all(np.diff(variance_exact) >= -1e-12)
# The target is odd about x = 1/2 and the inputs are symmetric about it, so the
# even Legendre terms are useless: bias² drops only at odd degrees, and each even
# degree adds variance for nothing.
odd, even = DEGREES[1::2], DEGREES[2::2]
print("[B-tradeoff] bias² at degrees 1, 3, ..., 11: " + ", ".join(f"{b:.1e}" for b in bias2_exact[odd])
      + f"; variance grows from {variance_exact[0]:.5f} to {variance_exact[-1]:.5f}")
assert np.all(np.diff(bias2_exact[odd]) < 0)
assert np.allclose(bias2_exact[even], bias2_exact[odd], rtol=1e-6, atol=0)

# The sweet spot: enough degree to bend like a sine, not so much that the fit
# chases the noise.  Brute force and closed form must pick the same degree.
best = DEGREES[np.argmin(test_error_mc)]
best_exact = DEGREES[np.argmin(bias2_exact + variance_exact)]
print(f"[B-tradeoff] lowest test error {test_error_mc[best]:.5f} at degree {best} "
      f"(noise floor {SIGMA**2:.5f}); degree 0: {test_error_mc[0]:.5f}, "
      f"degree {DEGREES[-1]}: {test_error_mc[-1]:.5f}")
assert best == best_exact == 3

# %% B-csv
# One row per degree; the Monte-Carlo terms first, then their closed forms.
# Six significant digits rather than six decimals keep the tiny high-degree
# bias² values readable on the figure's log scale.
np.savetxt(OUT_DIR / "bias_variance_by_degree.csv",
           np.column_stack([table, bias2_exact, variance_exact]),
           delimiter=",", comments="", fmt=["%d"] + ["%.6g"] * 7,
           header="degree,bias2,variance,noise,sum,test_error,bias2_exact,variance_exact")
print("[B-csv] saved bias_variance_by_degree.csv")

# %% B-preview
fig, axes = plt.subplots(1, 4, figsize=(13, 3.4), gridspec_kw={"width_ratios": [1.5, 1, 1, 1]})

# Left: the decomposition.  A log scale shows bias² collapsing and variance
# growing by orders of magnitude; the crosses are the independently measured
# test error, sitting on the sum.  Below 10⁻³ bias² no longer matters next to
# the noise (and its brute-force estimate hits its Monte-Carlo floor), so the
# axis stops there.
ax = axes[0]
ax.semilogy(DEGREES, bias2_mc, "o-", label="bias²")
ax.semilogy(DEGREES, variance_mc, "s-", label="variance")
ax.axhline(SIGMA**2, linestyle="--", color="grey", label="noise σ²")
ax.semilogy(DEGREES, bias2_mc + variance_mc + SIGMA**2, "-", color="black", label="sum")
ax.semilogy(DEGREES, test_error_mc, "x", color="tab:red", markersize=8, label="measured test error")
ax.set_xlabel("polynomial degree")
ax.set_ylabel("mean squared error")
ax.set_ylim(1e-3, 3)
ax.set_title("bias–variance decomposition")
ax.legend(fontsize=7)

# Right: 20 of the 10 000 fits at three degrees.  Underfit fits agree with each
# other but miss the truth (bias); overfit ones centre on it but scatter (variance).
for ax, degree, label in zip(axes[1:], (1, best, DEGREES[-1]), ("underfit", "best", "overfit")):
    ax.plot(x_test, sample_fits[degree], color="tab:blue", alpha=0.3, linewidth=0.8)
    ax.plot(x_test, f(x_test), color="black", linewidth=2)
    ax.set_ylim(-2.5, 2.5)
    ax.set_xlabel("x")
    ax.set_title(f"degree {degree} ({label})")
axes[1].set_ylabel("fitted f̂(x)")

fig.tight_layout()
out = OUT_DIR / "bias_variance.png"
fig.savefig(out, bbox_inches="tight", dpi=110)
print(f"[B-preview] saved {out}")
plt.close()
