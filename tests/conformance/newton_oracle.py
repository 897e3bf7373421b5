"""The float64 oracle of the conformance tests: the entropic UOT plan by Newton's
method on the dual, with eps-continuation, written independently of the solvers.

With x = log u, y = log v (the potentials over eps), log K_ij = -C_ij / eps + log R_ij,
r_a = eps / tau_a and r_b = eps / tau_b, the dual (over eps) is

    D(x, y) = sum_i psi_a(x_i) + sum_j psi_b(y_j) - sum_ij exp(x_i + y_j + log K_ij)
    psi(x) = -(w / r) (exp(-r x) - 1)   (w the weight; w x when tau = inf)

a concave function whose maximiser gives the plan P_ij = exp(x_i + y_j + log K_ij).
Each eps stage runs damped Newton steps (backtracking on D) until the gradient,
relative to the weights, is below 1e-14; the stages go from a large eps down to the
target, each starting from the last stage's potentials f = eps x.
"""

import numpy as np


def _dual(x, y, log_k, a, b, ra, rb):
    z = x[:, None] + y[None, :] + log_k
    if np.max(z) > 700:
        return -np.inf
    value = -np.exp(z).sum()
    value += (a * x).sum() if ra == 0 else (-(a / ra) * np.expm1(-ra * x)).sum()
    value += (b * y).sum() if rb == 0 else (-(b / rb) * np.expm1(-rb * y)).sum()
    return value


def _newton_stage(x, y, log_k, a, b, ra, rb, max_steps=500):
    m = len(x)
    for _ in range(max_steps):
        p = np.exp(x[:, None] + y[None, :] + log_k)
        ta = a * np.exp(-ra * x)
        tb = b * np.exp(-rb * y)
        grad = np.concatenate([ta - p.sum(1), tb - p.sum(0)])
        if np.max(np.abs(grad)) <= 1e-14 * max(a.sum(), b.sum()):
            break
        h = np.zeros((m + len(y), m + len(y)))
        h[:m, :m] = np.diag(ra * ta + p.sum(1))
        h[m:, m:] = np.diag(rb * tb + p.sum(0))
        h[:m, m:] = p
        h[m:, :m] = p.T
        h += 1e-13 * np.trace(h) / len(h) * np.eye(len(h))  # balanced problems: (x + c, y - c) is flat
        step = np.linalg.solve(h, grad)
        base = _dual(x, y, log_k, a, b, ra, rb)
        slope = grad @ step
        t = 1.0
        while t > 1e-12:
            nx, ny = x + t * step[:m], y + t * step[m:]
            if _dual(nx, ny, log_k, a, b, ra, rb) >= base + 1e-4 * t * slope - 1e-15 * abs(base):
                break
            t *= 0.5
        x, y = nx, ny
    return x, y


def oracle_plan(cost, a, b, eps, tau_a, tau_b, product_reference=False):
    """The converged float64 plan (M x N) for cost C, weights a, b."""
    cost = np.asarray(cost, dtype=np.float64)
    log_r = (np.log(a)[:, None] + np.log(b)[None, :]) if product_reference else 0.0
    start = max(float(cost.max()), eps)
    stages = [start]
    while stages[-1] * 0.5 > eps:
        stages.append(stages[-1] * 0.5)
    stages.append(eps)
    f = np.zeros(len(a))
    g = np.zeros(len(b))
    for e in stages:
        ra = 0.0 if np.isinf(tau_a) else e / tau_a
        rb = 0.0 if np.isinf(tau_b) else e / tau_b
        log_k = -cost / e + log_r
        x, y = _newton_stage(f / e, g / e, log_k, a, b, ra, rb)
        f, g = e * x, e * y
    return np.exp(f[:, None] / eps + g[None, :] / eps - cost / eps + log_r)
