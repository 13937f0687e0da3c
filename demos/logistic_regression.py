"""
logistic_regression.py — logistic regression fitted by gradient descent and by
Newton's method: the gradient, the convergence and the calibration checked.

Purpose
-------
Logistic regression models the probability of the positive class as
p = σ(w·x), σ(z) = 1/(1 + e^(-z)), and is fitted by minimising the mean
cross-entropy (log loss).  The entry states four things a practitioner relies
on, and the demo checks each on synthetic data drawn from a known logistic
model: the gradient has the simple form Xᵀ(p - y)/n; gradient descent with
step 1/L, L the gradient's Lipschitz constant, lowers the loss at every step,
while Newton's method reaches the same optimum in a handful of steps; with an
intercept, the fitted model's mean predicted probability equals the training
set's positive rate exactly; and a correctly specified model is *calibrated* —
among test points predicted at 0.7, about 70 % are positive — which accuracy
alone cannot tell: scaling the logits by 3 changes no decision but ruins the
probabilities, and only the cross-entropy and the reliability curve notice.

Method
------
Data: two correlated Gaussian features (correlation 0.6), labels drawn as
y ~ Bernoulli(σ(w*·x)) with true weights w* = (-0.5, 2.0, -1.0) for
(intercept, x₁, x₂); 5 000 training and 100 000 test points.

    loss(w)     = mean( log(1 + e^z) - y z ),    z = X w
    gradient    = Xᵀ (σ(X w) - y) / n
    Hessian     = Xᵀ diag(p (1 - p)) X / n  ≼  λ_max(XᵀX/n)/4 · I  =  L · I

Gradient descent takes steps w ← w - gradient/L; Newton's method takes
w ← w - Hessian⁻¹ gradient.  Both stop when the gradient norm is below 1e-10.

Blocks
------
[B-data]         the true model and the training and test sets drawn from it
[B-gradient]     the cross-entropy loss and its gradient; the analytic
                 gradient matches central finite differences
[B-train]        gradient descent with step 1/L lowers the loss at every step
                 by at least |gradient|²/(2L); Newton's method reaches the
                 same weights in far fewer steps
[B-test]         test accuracy and cross-entropy are within 0.01 of those of
                 the true model (the Bayes-optimal classifier)
[B-calibration]  mean predicted probability = positive rate on the training
                 set; the reliability curve on the test set follows the
                 diagonal; logits scaled by 3 keep the accuracy but lose the
                 calibration
[B-csv]          the two CSVs the entry's figures read
[B-preview]      the matplotlib preview: decision boundaries, the training
                 curve and the reliability diagram

Outputs
-------
  logistic_regression_loss.csv        — columns: step, loss, excess (training
        loss of gradient descent, and its excess over the optimum)
  logistic_regression_reliability.csv — columns: bin_low, bin_high,
        mean_predicted, observed, count for the fitted model, then
        over_mean_predicted, over_observed, over_count for logits scaled by 3
        (10 bins of predicted probability on the test set)
  logistic_regression.png             — matplotlib preview
"""

import numpy as np
import matplotlib.pyplot as plt
from pathlib import Path

OUT_DIR = Path(".")
# A fixed seed makes the data sets, hence every printed number and the
# committed figure, the same on every run.
rng = np.random.default_rng(0)

# %% B-data
# Intercept first, then one weight per feature; the design matrices below carry
# a leading column of ones so that the intercept is just another weight.
W_TRUE = np.array([-0.5, 2.0, -1.0])
# Correlated features make the loss surface an elongated bowl, which is where
# gradient descent and Newton's method differ most.
COV = np.array([[1.0, 0.6],
                [0.6, 1.0]])

def sigmoid(z):
    # Equal to 1/(1 + e^(-z)), but tanh never overflows for large |z|.
    return 0.5 * (1.0 + np.tanh(0.5 * z))

def sample(n):
    features = rng.multivariate_normal(np.zeros(2), COV, size=n)
    X = np.column_stack([np.ones(n), features])
    # Each label is a coin flip with the true model's probability, so even the
    # true weights cannot classify every point correctly.
    y = (rng.uniform(size=n) < sigmoid(X @ W_TRUE)).astype(float)
    return X, y

X, y = sample(5_000)
X_test, y_test = sample(100_000)
print(f"[B-data] {len(y)} training points ({y.mean():.1%} positive), "
      f"{len(y_test)} test points ({y_test.mean():.1%} positive)")

# %% B-gradient
def as_tuple(v, digits):
    # A weight vector as "(a, b, c)" for the printed checks.
    return "(" + ", ".join(f"{x:.{digits}f}" for x in v) + ")"

def loss(w, X, y):
    # Mean cross-entropy -[y log p + (1 - y) log(1 - p)] with p = σ(z) simplifies
    # to log(1 + e^z) - y z; logaddexp(0, z) evaluates log(1 + e^z) stably.
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z)

def gradient(w, X, y):
    # Each point pulls on the weights with its features, scaled by its residual
    # p - y: confident correct predictions barely pull at all.
    return X.T @ (sigmoid(X @ w) - y) / len(y)

# Central differences approximate each partial derivative with error O(h²),
# so at h = 1e-6 they should agree with the analytic gradient to ~1e-9.
# The probe is a random point, away from the optimum where the gradient would
# be nearly zero and a relative comparison meaningless.
w_probe = rng.standard_normal(3)
h = 1e-6
numeric = np.array([(loss(w_probe + h * e, X, y) - loss(w_probe - h * e, X, y)) / (2 * h)
                    for e in np.eye(3)])
analytic = gradient(w_probe, X, y)
print(f"[B-gradient] analytic {as_tuple(analytic, 6)} vs finite differences {as_tuple(numeric, 6)}")
assert np.linalg.norm(analytic - numeric) < 1e-6 * np.linalg.norm(analytic)

# %% B-train
TOL = 1e-10   # stop when the gradient norm falls below this

# p(1 - p) ≤ 1/4 bounds the Hessian by λ_max(XᵀX/n)/4 = L.  With step 1/L the
# descent lemma guarantees loss(w - g/L) ≤ loss(w) - |g|²/(2L): no line search
# and no tuning, and the loss can never go up.
L = np.linalg.eigvalsh(X.T @ X / len(y)).max() / 4

w_gd = np.zeros(3)
losses = [loss(w_gd, X, y)]
g = gradient(w_gd, X, y)
while np.linalg.norm(g) > TOL:
    w_gd = w_gd - g / L
    losses.append(loss(w_gd, X, y))
    # The small slack absorbs rounding once the decrease itself is ~1e-16.
    assert losses[-1] <= losses[-2] - (g @ g) / (2 * L) + 1e-12
    g = gradient(w_gd, X, y)
losses = np.array(losses)
print(f"[B-train] gradient descent, step 1/L = {1 / L:.4f}: loss {losses[0]:.6f} -> "
      f"{losses[-1]:.6f} in {len(losses) - 1} steps, lower at every step")

# Newton's method rescales the gradient by the inverse Hessian, undoing the
# elongation of the bowl; near the optimum it converges quadratically.
w_newton = np.zeros(3)
newton_losses = [loss(w_newton, X, y)]
g = gradient(w_newton, X, y)
while np.linalg.norm(g) > TOL:
    p = sigmoid(X @ w_newton)
    hessian = X.T @ (X * (p * (1 - p))[:, None]) / len(y)
    w_newton = w_newton - np.linalg.solve(hessian, g)
    newton_losses.append(loss(w_newton, X, y))
    g = gradient(w_newton, X, y)
newton_losses = np.array(newton_losses)
print(f"[B-train] Newton's method: the same weights in {len(newton_losses) - 1} steps, "
      f"w = {as_tuple(w_newton, 3)}, true {as_tuple(W_TRUE, 3)}")
# The loss is strictly convex here, so both must find the one minimiser; it
# differs from W_TRUE only by the sampling error of 5 000 points (~0.05).
assert np.allclose(w_gd, w_newton, atol=1e-6)
assert np.all(np.abs(w_gd - W_TRUE) < 0.15)

# %% B-test
# The true weights give the Bayes-optimal classifier and the lowest possible
# expected cross-entropy; a well-specified model fitted on enough data should
# come close to both on fresh data.
p_test = sigmoid(X_test @ w_gd)
p_bayes = sigmoid(X_test @ W_TRUE)
accuracy = np.mean((p_test > 0.5) == y_test)
accuracy_bayes = np.mean((p_bayes > 0.5) == y_test)
ce, ce_bayes = loss(w_gd, X_test, y_test), loss(W_TRUE, X_test, y_test)
print(f"[B-test] accuracy {accuracy:.4f} (true model {accuracy_bayes:.4f}), "
      f"cross-entropy {ce:.4f} nats (true model {ce_bayes:.4f})")
assert abs(accuracy - accuracy_bayes) < 0.01 and abs(ce - ce_bayes) < 0.01

# %% B-calibration
# The intercept's component of the gradient is mean(p - y), so at the optimum
# the mean predicted probability equals the positive rate — exactly, on the
# training set, for any data and any features.
p_train = sigmoid(X @ w_gd)
print(f"[B-calibration] training set: mean predicted probability {p_train.mean():.6f}, "
      f"positive rate {y.mean():.6f}")
assert abs(p_train.mean() - y.mean()) < 1e-9

N_BINS = 10
def reliability(p, y):
    # Group points by predicted probability into equal-width bins; a calibrated
    # model's observed positive rate in each bin matches its mean prediction.
    bins = np.minimum((p * N_BINS).astype(int), N_BINS - 1)
    count = np.bincount(bins, minlength=N_BINS)
    mean_predicted = np.bincount(bins, weights=p, minlength=N_BINS) / count
    observed = np.bincount(bins, weights=y, minlength=N_BINS) / count
    # Expected calibration error: the gaps, weighted by how many points they cover.
    ece = np.sum(count * np.abs(mean_predicted - observed)) / len(p)
    return mean_predicted, observed, count, ece

mean_predicted, observed, count, ece = reliability(p_test, y_test)
worst = np.max(np.abs(mean_predicted - observed))
print(f"[B-calibration] test set, {N_BINS} bins: largest gap predicted vs observed "
      f"{worst:.3f}, ECE {ece:.4f}")
# What remains is the estimation error of 5 000 training points.
assert worst < 0.03

# Multiplying every logit by 3 keeps each one's sign, so every decision and the
# accuracy stay the same, but the probabilities are pushed towards 0 and 1.
p_over = sigmoid(3 * X_test @ w_gd)
assert np.array_equal(p_over > 0.5, p_test > 0.5)
over_predicted, over_observed, over_count, over_ece = reliability(p_over, y_test)
over_ce = loss(3 * w_gd, X_test, y_test)
print(f"[B-calibration] logits x3: accuracy still {np.mean((p_over > 0.5) == y_test):.4f}, "
      f"but cross-entropy {over_ce:.4f} nats and ECE {over_ece:.4f}")
assert over_ce > ce + 0.1 and over_ece > 5 * ece

# %% B-csv
# The training curve, with the excess over the optimum (Newton's loss) for a
# log-scale plot.
steps = np.arange(len(losses))
optimum = loss(w_newton, X, y)
excess = losses - optimum
np.savetxt(OUT_DIR / "logistic_regression_loss.csv",
           np.column_stack([steps, losses, excess]),
           delimiter=",", header="step,loss,excess", comments="", fmt=["%d", "%.8f", "%.3e"])
print("[B-csv] saved logistic_regression_loss.csv")

# One row per probability bin: the fitted model, then the overconfident one.
edges = np.linspace(0.0, 1.0, N_BINS + 1)
np.savetxt(OUT_DIR / "logistic_regression_reliability.csv",
           np.column_stack([edges[:-1], edges[1:], mean_predicted, observed, count,
                            over_predicted, over_observed, over_count]),
           delimiter=",", comments="", fmt="%.6g",
           header="bin_low,bin_high,mean_predicted,observed,count,"
                  "over_mean_predicted,over_observed,over_count")
print("[B-csv] saved logistic_regression_reliability.csv")

# %% B-preview
fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(12.5, 3.8))

# Left: 1 000 test points and the decision boundary w·x = 0, a straight line,
# for the fitted and the true weights.
shown = slice(0, 1000)
ax1.scatter(X_test[shown, 1], X_test[shown, 2], c=y_test[shown], cmap="coolwarm",
            s=6, alpha=0.6)
x1 = np.linspace(-3.5, 3.5, 2)
for w, style, label in ((w_gd, "-", "fitted"), (W_TRUE, "--", "true")):
    ax1.plot(x1, -(w[0] + w[1] * x1) / w[2], style, color="black", label=label)
ax1.set_xlim(-3.5, 3.5)
ax1.set_ylim(-3.5, 3.5)
ax1.set_xlabel("x₁")
ax1.set_ylabel("x₂")
ax1.set_title("decision boundary")
ax1.legend(fontsize=8)

# Middle: the excess loss of gradient descent falls on a straight line in log
# scale (linear convergence); Newton's falls ever faster (quadratic convergence).
# Below ~1e-14 the excess is rounding noise, so those steps are left out.
resolved = excess > 1e-14
ax2.semilogy(steps[resolved], excess[resolved], color="tab:blue", label="gradient descent")
newton_excess = newton_losses - optimum
newton_resolved = newton_excess > 1e-14
ax2.semilogy(np.arange(len(newton_losses))[newton_resolved], newton_excess[newton_resolved],
             "s-", color="tab:orange", label="Newton's method")
ax2.set_xlabel("step")
ax2.set_ylabel("loss − optimal loss")
ax2.set_title("training")
ax2.legend(fontsize=8)

# Right: the reliability diagram; the calibrated model hugs the diagonal, the
# overconfident one is flatter: its near-0 and near-1 predictions come true
# far less reliably than they claim.
ax3.plot([0, 1], [0, 1], color="grey", linewidth=1)
ax3.plot(mean_predicted, observed, "o-", label=f"fitted (ECE {ece:.3f})")
ax3.plot(over_predicted, over_observed, "s-", label=f"logits x3 (ECE {over_ece:.3f})")
ax3.set_xlabel("mean predicted probability")
ax3.set_ylabel("observed positive rate")
ax3.set_title("reliability on the test set")
ax3.legend(fontsize=8)

fig.tight_layout()
out = OUT_DIR / "logistic_regression.png"
fig.savefig(out, bbox_inches="tight", dpi=110)
print(f"[B-preview] saved {out}")
plt.close()
