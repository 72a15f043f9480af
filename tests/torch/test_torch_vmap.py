"""torch.func.vmap over the torch target's ops (tests/e2e/solver): the
sequential rule (one call per element) and `vmap: fold` (the batch folded
into the kernel's own n_rhs dimension: one call), the numbers against a
loop of single calls and numpy."""

import numpy as np
import pytest
from conftest import REPO, build
from torch.utils._python_dispatch import TorchDispatchMode


@pytest.fixture(scope="module")
def solver(torch, tmp_path_factory):
    return build(tmp_path_factory, REPO / "tests" / "e2e" / "solver", "e2e_solver")


@pytest.fixture(scope="module")
def system(torch):
    rng = np.random.default_rng(0)
    n = 5
    A = rng.standard_normal((n, n)) * (rng.random((n, n)) < 0.5) + n * np.eye(n)
    Ai, Aj = (torch.tensor(i.astype(np.int32)) for i in np.nonzero(A))
    return A, Ai, Aj, torch.tensor(A[Ai.numpy(), Aj.numpy()]), rng


class Calls(TorchDispatchMode):
    """Counts the calls of each op of the library."""

    def __init__(self):
        super().__init__()
        self.n = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = str(func.overloadpacket)
        self.n[name] = self.n.get(name, 0) + 1
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("name,calls", [("solve", 1), ("solve_each", 4)])
def test_vmap_fold_is_one_call_sequential_one_per_element(solver, torch, system, name, calls):
    A, Ai, Aj, Ax, rng = system
    b = torch.tensor(rng.standard_normal((4, 5, 3)))
    f = getattr(solver.module, name)
    with Calls() as seen:
        x = torch.func.vmap(lambda b: f(Ai, Aj, Ax, b))(b)
    assert seen.n.get(f"e2e_solver.{name}") == calls, seen.n
    each = torch.stack([f(Ai, Aj, Ax, b[i]) for i in range(4)])
    np.testing.assert_allclose(x.numpy(), each.numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(A, b.numpy()), rtol=1e-10)


def test_vmap_batch_axis_anywhere_nested_and_outside_the_fold(solver, torch, system):
    A, Ai, Aj, Ax, rng = system
    m = solver.module
    b = torch.tensor(rng.standard_normal((5, 3, 2)))
    x = torch.func.vmap(lambda b: m.solve(Ai, Aj, Ax, b), in_dims=2, out_dims=1)(b)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(A, b.permute(2, 0, 1).numpy()).transpose(1, 0, 2), rtol=1e-10)
    bb = torch.tensor(rng.standard_normal((2, 3, 5, 4)))
    inner = torch.func.vmap(lambda b: m.dot(Ai, Aj, Ax, b))
    y = torch.func.vmap(inner)(bb)
    np.testing.assert_allclose(y.numpy(), A @ bb.numpy(), rtol=1e-12)
    # A batched input outside the fold (the values): the sequential rule.
    Axs = torch.stack([Ax, 2 * Ax])
    b1 = torch.tensor(rng.standard_normal((5, 3)))
    with Calls() as seen:
        z = torch.func.vmap(lambda ax: m.dot(Ai, Aj, ax, b1))(Axs)
    assert seen.n.get("e2e_solver.dot") == 2, seen.n
    np.testing.assert_allclose(z[1].numpy(), 2 * (A @ b1.numpy()), rtol=1e-12)
