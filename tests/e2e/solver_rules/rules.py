"""The derivative rules of the solver's kernels, in Python: each takes the
generated module, the kernel's inputs, its outputs and one cotangent per
output, and returns one cotangent per input (None for the index arrays)."""


def solve_vjp(m, Ai, Aj, Ax, b, x, ct):
    # x = A^-1 b: lam = A^-T ct (the transpose swaps rows and columns);
    # d/db = lam, d/dA = -lam x^T at the stored entries.
    lam = m.solve(Aj, Ai, Ax, ct)
    return None, None, -lam[Ai] * x[Aj], lam


def wrong_vjp(m, Ai, Aj, Ax, b, x, ct):
    # A cotangent for Ax of b's shape: refused, naming the rule and Ax.
    lam = m.solve_wrong(Aj, Ai, Ax, ct)
    return None, None, lam, lam


def res_vjp(m, Ai, Aj, Ax, b, x, r, ct):
    # Handed the residual r = 2 x beside x, one cotangent (x's).
    lam = m.solve(Aj, Ai, Ax, ct)
    return None, None, -lam[Ai] * (r[Aj] / 2), lam
