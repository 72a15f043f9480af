"""The torch target end to end: trees of tests/e2e (and two small ones made
here) built with `begen build --target jax,torch`, their ops called from a
real torch: eager numbers against numpy, the op's checks, torch.compile
(aot_eager with dynamic shapes, and one inductor run), torch.library.opcheck,
gradcheck in float64 (and a wrong backward kernel it must catch), and the
same kernel from JAX (a subprocess of the jax venv) giving the same numbers.
"""

import subprocess
import textwrap

import numpy as np
import pytest
from conftest import build, import_module, jax_python, ops_compiled, ops_run, run_begen, torch_only_env

# ---- eager numbers -------------------------------------------------------


def test_typed_eager_numbers_match_numpy(typed, torch):
    m = typed.module
    x = torch.arange(5, dtype=torch.float32)
    y = torch.full((5,), 2.0)
    np.testing.assert_allclose(m.axpy(x, y, a=3.0).numpy(), 3.0 * x.numpy() + 2.0)
    A = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    v = torch.linspace(-1, 1, 4)
    np.testing.assert_allclose(m.matvec(A, v).numpy(), A.numpy() @ v.numpy(), rtol=1e-6)
    # A template kernel's instance chosen by the input's dtype; the output is of it.
    for dtype in (torch.float32, torch.float64, torch.int32):
        got = m.scale(torch.arange(4).to(dtype), s=2.5)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.numpy(), (np.arange(4) * 2.5).astype(got.numpy().dtype))
    # ... and by a value constant, a keyword.
    for times in (1, 2, 3):
        np.testing.assert_array_equal(m.repeat(x, TIMES=times).numpy(), times * x.numpy())
    c = m.count_small(torch.tensor([0.1, 0.7, 0.2, 0.9]))
    assert c.shape == () and c.dtype == torch.int32 and int(c) == 2


def test_in_place_tensor_is_updated_and_returned(typed, torch):
    acc = torch.ones(4)
    got = typed.module.accumulate(acc, torch.arange(4, dtype=torch.float32))
    assert got is acc
    np.testing.assert_array_equal(acc.numpy(), [1, 2, 3, 4])


def test_read_only_inputs_may_be_strided(typed, torch):
    # The typed function makes a non-contiguous input contiguous (a copy).
    A = torch.arange(12, dtype=torch.float32).reshape(4, 3).t()
    assert not A.is_contiguous()
    v = torch.ones(4)
    np.testing.assert_allclose(typed.module.matvec(A, v).numpy(), A.numpy() @ v.numpy())


def test_attribute_defaults_reach_the_kernel(tmp_path_factory, torch):
    built = build(tmp_path_factory, __import__("conftest").REPO / "tests" / "e2e" / "contracts", "e2e_contracts")
    m = built.module
    x = torch.tensor([[3.0, 4.0], [1.0, -1.0]])
    ref = x.numpy() / np.sqrt((x.numpy() ** 2).mean(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(m.rms_norm(x).numpy(), ref, rtol=1e-5)
    np.testing.assert_allclose(m.rms_norm(x, scale=2.0).numpy(), 2 * ref, rtol=1e-5)
    np.testing.assert_array_equal(m.shift(torch.arange(3, dtype=torch.int32), times=2).numpy(), [3, 5, 7])
    # Leading dimensions (`...`) are not expressed yet: left out, by name.
    assert "leaves out kernel 'scale_any'" in built.stderr
    assert not hasattr(m, "scale_any")


# ---- the op's checks ------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda m, t: m.axpy(t.zeros(3, dtype=t.float64), t.zeros(3), a=1.0),
            "axpy: parameter 'x' must be float32, got float64",
        ),
        (
            lambda m, t: m.axpy(t.zeros(3), t.zeros(4), a=1.0),
            "axpy: dimension 'n' is 3 (parameter 'x', axis 0) but parameter 'y' has 4 at axis 0",
        ),
        (lambda m, t: m.matvec(t.zeros(3), t.zeros(3)), "matvec: parameter 'A' must have rank 2, got shape [3]"),
        (
            lambda m, t: m.scale(t.zeros(3, dtype=t.int64), s=1.0),
            "scale: dtype int64 is not instantiated; T is one of float32, float64, int32",
        ),
        (lambda m, t: m.repeat(t.zeros(3), TIMES=4), "repeat: TIMES=4 is not instantiated; TIMES is one of 1, 2, 3"),
        (lambda m, t: m.accumulate(t.zeros(6)[::2], t.zeros(3)), "accumulate: parameter 'acc' must be contiguous"),
        (lambda m, t: m.count_small(t.zeros(300)), "count_small: dimension 'n' = 300 does not fit parameter 'n'"),
        (
            lambda m, t: t.ops.e2e_typed.matvec(t.zeros(4, 3).t(), t.zeros(4)),
            "matvec: parameter 'A' must be contiguous",
        ),
    ],
)
def test_the_op_checks_its_tensors_naming_kernel_and_parameter(typed, torch, call, message):
    with pytest.raises(RuntimeError) as e:
        call(typed.module, torch)
    assert message in str(e.value)


def test_a_sparse_tensor_never_reaches_the_kernel(typed, torch):
    # The ops are registered for the CPU (dense) dispatch key only: torch's
    # dispatcher refuses a sparse tensor before the op's own layout check.
    with pytest.raises(NotImplementedError, match="e2e_typed::axpy.*SparseCPU"):
        torch.ops.e2e_typed.axpy(torch.zeros(3).to_sparse(), torch.zeros(3), a=1.0)


def test_kernels_it_cannot_express_are_left_out_by_name(typed):
    assert "warning: the torch target leaves out kernel 'fill': " in typed.stderr
    assert "no tensor input" in typed.stderr
    assert not hasattr(typed.module, "fill")
    # Outputs the inputs do not size make an out= op, not a warning.
    for name in ("tile", "untyped"):
        assert f"leaves out kernel '{name}'" not in typed.stderr
        assert name in typed.module.__all__
    assert typed.module.__all__[:1] == ["NAMESPACE"]


# ---- out=: outputs the caller gives ------------------------------------------


class Spec:
    """A jax.ShapeDtypeStruct-like spec: a shape and a dtype."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype


def test_out_ops_write_the_callers_outputs(typed, torch):
    m = typed.module
    x = torch.arange(3, dtype=torch.float32)
    want = np.repeat(x.numpy()[:, None], 4, axis=1)
    # A spec: a new tensor on the inputs' device, its dims read from it.
    for dtype in (torch.float32, np.float32, "float32"):
        got = m.tile(x, out=Spec((3, 4), dtype))
        assert got.shape == (3, 4) and got.dtype == torch.float32
        np.testing.assert_array_equal(got.numpy(), want)
    # A tensor: written in place and returned.
    o = torch.full((3, 4), -1.0)
    assert m.tile(x, out=o) is o
    np.testing.assert_array_equal(o.numpy(), want)
    # No contract at all: any shape, the dtype the tensors have.
    y = torch.empty(2, 3)
    assert m.untyped(torch.ones(2, 3), a=2.5, out=y) is y
    np.testing.assert_array_equal(y.numpy(), np.full((2, 3), 2.5))
    np.testing.assert_array_equal(m.untyped(x, a=2.0, out=Spec((3,), torch.float32)).numpy(), 2 * x.numpy())
    with pytest.raises(TypeError, match="required keyword-only argument: 'out'"):
        m.tile(x)
    # The stub says what out= takes, and parses.
    stub = (typed.out / "e2e_typed_torch.pyi").read_text()
    assert "def tile(x: _torch.Tensor, /, *, out: _torch.Tensor | _OutSpec) -> _torch.Tensor: ..." in stub
    __import__("ast").parse(stub)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda m, t: m.tile(t.zeros(3), out=t.empty(4, 2)),
            RuntimeError,
            "tile: dimension 'n' is 3 (parameter 'x', axis 0) but parameter 'out' has 4 at axis 0",
        ),
        (
            lambda m, t: m.tile(t.zeros(3), out=t.empty(3)),
            RuntimeError,
            "tile: parameter 'out' must have rank 2, got shape [3]",
        ),
        (
            lambda m, t: m.tile(t.zeros(3), out=Spec((3, 2), t.float64)),
            RuntimeError,
            "tile: parameter 'out' must be float32, got float64",
        ),
        (
            lambda m, t: m.tile(t.zeros(3), out=t.empty(2, 3).t()),
            RuntimeError,
            "tile: parameter 'out' must be contiguous",
        ),
        (
            lambda m, t: m.tile(t.zeros(3), out=t.empty(3, 2, device="meta")),
            ValueError,
            "tile: output 'out' is on meta, but the inputs are on cpu",
        ),
        (
            lambda m, t: m.tile(t.zeros(3), out=(3, 2)),
            TypeError,
            "tile: out= takes a tensor or a spec with .shape and .dtype; got tuple for output 'out'",
        ),
        (
            lambda m, t: m.tile(t.zeros(3), out=Spec((3, 2), "float128")),
            TypeError,
            "tile: output 'out': dtype 'float128' is no torch dtype",
        ),
        (
            lambda m, t: m.untyped(t.zeros(3, dtype=t.float8_e4m3fn), a=1.0, out=t.empty(3)),
            RuntimeError,
            "untyped: parameter 'x' has a dtype begen kernels do not take",
        ),
        (
            lambda m, t: m.untyped(t.zeros(3, requires_grad=True), a=1.0, out=t.empty(3)),
            NotImplementedError,
            "untyped: no autograd for an op whose outputs the caller gives (out=)",
        ),
    ],
)
def test_a_wrong_out_is_refused_naming_kernel_and_output(typed, torch, call, error, message):
    with pytest.raises(error) as e:
        call(typed.module, torch)
    assert message in str(e.value)


def test_the_out_op_itself_checks_the_outputs_device(typed, torch):
    # The op called directly: a CPU kernel's output on another device.
    # torch dispatches it to the fake (meta outranks CPU), which refuses it.
    with pytest.raises(ValueError, match="tile: output 'out' is on meta, but the inputs are on cpu"):
        torch.ops.e2e_typed.tile_out(torch.zeros(3), out=torch.empty(3, 2, device="meta"))


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_out_ops_compile_fullgraph(typed, torch, backend):
    torch._dynamo.reset()
    m = typed.module
    x = torch.arange(3, dtype=torch.float32)
    f = torch.compile(lambda x: m.tile(x, out=Spec((3, 4), torch.float32)) * 2, fullgraph=True, backend=backend)
    np.testing.assert_array_equal(f(x).numpy(), 2 * np.repeat(x.numpy()[:, None], 4, axis=1))

    # A graph input mutated by the op: functionalized, copied back.
    def g(x, y):
        m.untyped(x, a=3.0, out=y)
        return y + 1

    y = torch.zeros(3)
    got = torch.compile(g, fullgraph=True, backend=backend)(x, y)
    np.testing.assert_array_equal(y.numpy(), 3 * x.numpy())
    np.testing.assert_array_equal(got.numpy(), 3 * x.numpy() + 1)


@pytest.mark.parametrize(
    "name, args, kwargs",
    [
        ("tile_out", lambda t: (t.randn(5),), lambda t: {"out": t.empty(5, 3)}),
        ("untyped_out", lambda t: (t.randn(2, 3),), lambda t: {"a": 1.5, "y": t.empty(2, 3)}),
    ],
)
def test_opcheck_out_ops(typed, torch, name, args, kwargs):
    op = getattr(torch.ops.e2e_typed, name).default
    result = torch.library.opcheck(op, args(torch), kwargs(torch))
    assert set(result.values()) == {"SUCCESS"}, result


# ---- string and array attributes ------------------------------------------


@pytest.fixture(scope="module")
def vocab(torch, tmp_path_factory):
    return build(tmp_path_factory, __import__("conftest").REPO / "tests" / "e2e" / "vocab", "e2e_vocab")


@pytest.fixture(scope="module")
def structs(torch, tmp_path_factory):
    return build(tmp_path_factory, __import__("conftest").REPO / "tests" / "e2e" / "structs", "e2e_structs")


def test_a_string_attribute_reaches_the_kernel_as_its_utf8_bytes(vocab, torch):
    m = vocab.module
    schema = str(torch.ops.e2e_vocab.AddLength.default._schema)
    assert "str word, float scale" in schema, schema
    x = torch.arange(4, dtype=torch.float32)
    # "héllo" is 6 bytes in UTF-8: the kernel adds scale times its byte count.
    np.testing.assert_array_equal(m.AddLength(x, word="héllo", scale=0.5).numpy(), x.numpy() + 3.0)
    np.testing.assert_array_equal(m.AddLength(x, word="", scale=0.5).numpy(), x.numpy())
    # A string chooses the kernel's operation; one it does not know is its
    # own error, named, and the next call works.
    y = m.Apply(x, mode="square", out=torch.empty(4))
    np.testing.assert_array_equal(y.numpy(), x.numpy() ** 2)
    with pytest.raises(RuntimeError, match="^Apply: unknown mode 'cube'$"):
        m.Apply(x, mode="cube", out=torch.empty(4))
    np.testing.assert_array_equal(m.Apply(x, mode="negate", out=torch.empty(4)).numpy(), -x.numpy())
    with pytest.raises((TypeError, RuntimeError), match="mode"):
        m.Apply(x, mode=3, out=torch.empty(4))


def test_array_attributes_reach_the_kernel_as_its_element_type(structs, torch):
    m = structs.module
    assert "float[] c" in str(torch.ops.e2e_structs.poly_out.default._schema)
    assert "int[] idx" in str(torch.ops.e2e_structs.gather_out.default._schema)
    x = torch.linspace(-1, 1, 5, dtype=torch.float64)
    want = 1 + 2 * x.numpy() + 3 * x.numpy() ** 2
    for c in ([1.0, 2.0, 3.0], (1.0, 2.0, 3.0)):
        np.testing.assert_array_equal(m.poly(x, c=c, out=torch.empty(5, dtype=torch.float64)).numpy(), want)
    np.testing.assert_array_equal(m.poly(x, c=[], out=torch.zeros(5, dtype=torch.float64)).numpy(), np.zeros(5))
    v = torch.arange(10, dtype=torch.float32) * 10
    np.testing.assert_array_equal(m.gather(v, idx=[7, 0, 3], out=torch.empty(3)).numpy(), [70.0, 0.0, 30.0])
    # An element the kernel's int32 cannot hold is named with its index;
    # an index the kernel refuses is the kernel's own error.
    with pytest.raises(RuntimeError, match=r"gather: attribute 'idx'\[1\] = 4294967296 does not fit its type"):
        m.gather(v, idx=[0, 2**32], out=torch.empty(2))
    with pytest.raises(RuntimeError, match="index 99 out of range"):
        m.gather(v, idx=[99], out=torch.empty(1))
    stub = (structs.out / "e2e_structs_torch.pyi").read_text()
    assert "c: list[float]" in stub and "idx: list[int]" in stub, stub


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_string_and_array_attributes_compile_fullgraph(vocab, structs, torch, backend):
    v, s = vocab.module, structs.module
    x = torch.arange(4, dtype=torch.float32)

    def f(x):
        y = v.AddLength(x, word="abc", scale=2.0)
        # An op that writes its output, with an attribute named `mode` (a
        # keyword functionalization takes itself: the schema says `mode_`).
        y = v.Apply(y, mode="double", out=torch.empty(4))
        return s.gather(y, idx=[3, 1], out=torch.empty(2))

    got = torch.compile(f, fullgraph=True, backend=backend)(x)
    np.testing.assert_array_equal(got.numpy(), [18.0, 14.0])
    assert "str mode_, Tensor(a!) y" in str(torch.ops.e2e_vocab.Apply_out.default._schema)


@pytest.mark.parametrize(
    "op, args, kwargs",
    [
        ("e2e_vocab.AddLength", lambda t: (t.randn(5),), lambda t: {"word": "ab", "scale": 1.5}),
        ("e2e_vocab.Apply_out", lambda t: (t.randn(5),), lambda t: {"mode_": "double", "y": t.empty(5)}),
        (
            "e2e_structs.poly_out",
            lambda t: (t.randn(4, dtype=t.float64),),
            lambda t: {"c": [0.5, -1.0], "y": t.empty(4, dtype=t.float64)},
        ),
        ("e2e_structs.gather_out", lambda t: (t.randn(4),), lambda t: {"idx": [3, 3, 0], "y": t.empty(3)}),
    ],
)
def test_opcheck_string_and_array_attributes(vocab, structs, torch, op, args, kwargs):
    ns, name = op.split(".")
    result = torch.library.opcheck(getattr(getattr(torch.ops, ns), name).default, args(torch), kwargs(torch))
    assert set(result.values()) == {"SUCCESS"}, result


# ---- algorithms --------------------------------------------------------------


def _names(run):
    # A call's result and the names of the ops it ran.
    result, seen = run
    return result, [name for name, _ in seen]


def test_an_algorithm_runs_its_best_implementation_for_the_call(algo, torch):
    m = algo.module
    x, y = torch.arange(4.0), torch.ones(4)
    # add_fast (priority 10) unless it refuses alpha (0.0, -1.0): then add_cpu.
    got, ran = _names(ops_run("e2e_algo", lambda: m.add(x, y, alpha=2.0)))
    assert ran == ["add_fast"] and torch.equal(got, x + 2 * y)
    got, ran = _names(ops_run("e2e_algo", lambda: m.add(x, y, alpha=0.0)))
    assert ran == ["add_cpu"] and torch.equal(got, x)
    # fallback: false: the best refusing the call is an error naming it.
    with pytest.raises(
        ValueError,
        match=r"strict: no implementation supports this call: 'mul_fast' \(cpu, priority 1\) "
        r"does not support k=0 \(begen.yaml: unsupported\) \(the algorithm does not fall back",
    ):
        m.strict(x, k=0)
    assert _names(ops_run("e2e_algo", lambda: m.strict(x, k=2)))[1] == ["mul_fast"]
    # No implementation for the inputs' device.
    with pytest.raises(ValueError, match="cuda_only: no implementation runs on cpu .*run on cuda"):
        m.cuda_only(x, y, alpha=1.0)
    # An implementation's autograd formula is the algorithm's.
    v = torch.arange(4.0, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(m.sq(v, scale=2.0).sum(), v)
    assert torch.equal(g, 4 * v.detach())
    assert (
        "def add(x: _torch.Tensor, y: _torch.Tensor, /, *, alpha: float) -> _torch.Tensor: ..."
        in (algo.out / "e2e_algo_torch.pyi").read_text()
    )
    assert {"add", "strict", "sq", "cuda_only"} <= set(m.__all__)


def test_an_algorithm_compiles_to_its_chosen_op(algo, torch):
    m = algo.module
    x, y = torch.arange(4.0), torch.ones(4)
    out, ops = ops_compiled("e2e_algo", lambda a, b: m.add(a, b, alpha=0.0) * 2, x, y)
    assert torch.equal(out, 2 * x)
    assert [name for name, _ in ops] == ["add_cpu"], ops


def test_an_algorithm_chooses_its_implementation_by_dtype(tmp_path_factory, torch):
    built = build(tmp_path_factory, __import__("conftest").REPO / "tests" / "e2e" / "solver", "e2e_solver")
    m = built.module
    rows, cols = torch.tensor([0, 1, 2], dtype=torch.int32), torch.tensor([0, 1, 2], dtype=torch.int32)
    b = torch.ones(3, 2, dtype=torch.float64)
    for dtype, op in ((torch.float64, "solve"), (torch.complex128, "solve_c128")):
        a = torch.tensor([2.0, 4.0, 8.0], dtype=dtype)
        got, ran = _names(ops_run("e2e_solver", lambda a=a, dtype=dtype: m.linsolve(rows, cols, a, b.to(dtype))))
        assert ran == [op], ran
        np.testing.assert_allclose(got.numpy(), (b.to(dtype) / a[:, None]).numpy())
    with pytest.raises(TypeError, match="linsolve: inputs of dtypes int32, int32, float32, float64: no implementation"):
        m.linsolve(rows, cols, torch.ones(3), b)


# ---- torch.library.opcheck: schema, fake, autograd registration, AOT ------


@pytest.mark.parametrize(
    "name, args, kwargs",
    [
        ("axpy", lambda t: (t.randn(5), t.randn(5)), {"a": 2.0}),
        ("matvec", lambda t: (t.randn(3, 4), t.randn(4)), {}),
        ("scale", lambda t: (t.randn(5, dtype=t.float64),), {"s": 0.5}),
        ("repeat", lambda t: (t.randn(5),), {"TIMES": 2}),
        ("accumulate", lambda t: (t.randn(5), t.randn(5)), {}),
        ("count_small", lambda t: (t.rand(7),), {}),
    ],
)
def test_opcheck_typed(typed, torch, name, args, kwargs):
    op = getattr(torch.ops.e2e_typed, name).default
    result = torch.library.opcheck(op, args(torch), kwargs)
    assert set(result.values()) == {"SUCCESS"}, result


@pytest.mark.parametrize(
    "name, args, kwargs",
    [
        ("square", lambda t: (t.randn(5, dtype=t.float64, requires_grad=True),), {"scale": 1.5}),
        (
            "mulsum",
            lambda t: (
                t.randn(4, dtype=t.float64, requires_grad=True),
                t.randn(4, dtype=t.float64, requires_grad=True),
            ),
            {},
        ),
        (
            "gather",
            lambda t: (t.randn(6, dtype=t.float64, requires_grad=True), t.tensor([0, 5, 2, 2], dtype=t.int32)),
            {},
        ),
    ],
)
def test_opcheck_with_autograd(algo, torch, name, args, kwargs):
    op = getattr(torch.ops.e2e_algo, name).default
    result = torch.library.opcheck(op, args(torch), kwargs)
    assert set(result.values()) == {"SUCCESS"}, result


# ---- gradients --------------------------------------------------------------


def test_gradcheck_float64(algo, torch):
    m = algo.module
    x = torch.randn(6, dtype=torch.float64, requires_grad=True)
    y = torch.randn(6, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: m.square(x, scale=1.5), (x,))
    assert torch.autograd.gradcheck(m.mulsum, (x, y))
    # An integer input gets no gradient (None), the float one the kernel's.
    idx = torch.tensor([0, 5, 2, 2], dtype=torch.int32)
    assert torch.autograd.gradcheck(lambda x: m.gather(x, idx), (x,))
    g = torch.autograd.grad(m.gather(x, idx).sum(), x)[0]
    np.testing.assert_array_equal(g.numpy(), [1, 0, 2, 0, 0, 1])


def test_the_backward_is_once_differentiable(algo, torch):
    x = torch.randn(4, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(algo.module.square(x, scale=1.0).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError):
        torch.autograd.grad(g.sum(), x)


WRONG = textwrap.dedent(
    """\
    #include <cstdint>
    #include "brainevent/common.h"
    // y = x * x, and its residual r = 2 x (for the backward kernel only).
    // @BE sq arg:float64[n, d] ret:float64[n, d] ret:float64[n, d] dim.n dim.d
    void sq(const double* x, double* y, double* r, int64_t n, int64_t d) {
        for (int64_t i = 0; i < n * d; ++i) { y[i] = x[i] * x[i]; r[i] = 2.0 * x[i]; }
    }
    // dx = r * dy: bound by name, the residual first.
    // @BE sq_bwd arg:float64[n, d] arg:float64[n, d] ret:float64[n, d] dim.n dim.d
    void sq_bwd(const double* r, const double* ct, double* dx, int64_t n, int64_t d) {
        for (int64_t i = 0; i < n * d; ++i) dx[i] = r[i] * ct[i];
    }
    // The same forward with a wrong backward kernel: 3 x instead of 2 x.
    // @BE bad arg:float64[n] ret:float64[n] dim.n
    void bad(const double* x, double* y, int64_t n) { for (int64_t i = 0; i < n; ++i) y[i] = x[i] * x[i]; }
    // @BE bad_bwd arg:float64[n] arg:float64[n] ret:float64[n] dim.n
    void bad_bwd(const double* x, const double* ct, double* dx, int64_t n) {
        for (int64_t i = 0; i < n; ++i) dx[i] = 3.0 * x[i] * ct[i];
    }
    """
)


@pytest.fixture(scope="module")
def grads(torch, tmp_path_factory):
    tree = tmp_path_factory.mktemp("grads_src")
    (tree / "grads.cpp").write_text(WRONG)
    # The targets from begen.yaml, no --target.
    (tree / "begen.yaml").write_text(
        "name: t_grads\ntargets: [jax, torch]\nfunctions:\n  sq: {vjp: sq_bwd, residuals: [r]}\n  bad: {vjp: bad_bwd}\n"
    )
    return build(tmp_path_factory, tree, "t_grads", targets=None).module


def test_residuals_are_saved_and_not_returned(grads, torch):
    x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    y = grads.sq(x)
    assert isinstance(y, torch.Tensor) and y.shape == (2, 3)
    assert torch.autograd.gradcheck(grads.sq, (x,))
    result = torch.library.opcheck(torch.ops.t_grads.sq.default, (x,))
    assert set(result.values()) == {"SUCCESS"}, result


def test_a_wrong_backward_kernel_fails_gradcheck(grads, torch):
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    # GradcheckError, a RuntimeError, says which Jacobian disagrees.
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        torch.autograd.gradcheck(grads.bad, (x,))


# ---- torch.compile ----------------------------------------------------------


def test_compile_aot_eager_dynamic_shapes(typed, algo, torch):
    torch._dynamo.reset()
    m = typed.module
    f = torch.compile(lambda x, y: m.axpy(x, y, a=3.0) * 2, fullgraph=True, backend="aot_eager")
    for n in (5, 9):
        x, y = torch.randn(n), torch.randn(n)
        torch._dynamo.mark_dynamic(x, 0)
        torch._dynamo.mark_dynamic(y, 0)
        np.testing.assert_allclose(f(x, y).numpy(), 2 * (3 * x.numpy() + y.numpy()), rtol=1e-6)
    g = torch.compile(lambda x: algo.module.square(x, scale=2.0).sum(), fullgraph=True, backend="aot_eager")
    x = torch.randn(7, dtype=torch.float64, requires_grad=True)
    torch._dynamo.mark_dynamic(x, 0)
    g(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * x.detach().numpy())
    acc = torch.zeros(4)
    torch.compile(lambda a, b: m.accumulate(a, b), fullgraph=True, backend="aot_eager")(acc, torch.ones(4))
    np.testing.assert_array_equal(acc.numpy(), np.ones(4))


def test_compile_inductor(typed, torch):
    torch._dynamo.reset()
    m = typed.module
    f = torch.compile(lambda A, v: m.matvec(A, v).relu() + 1, fullgraph=True)
    A, v = torch.randn(3, 4), torch.randn(4)
    np.testing.assert_allclose(f(A, v).numpy(), np.maximum(A.numpy() @ v.numpy(), 0) + 1, rtol=1e-5)


# ---- the same kernel from JAX ------------------------------------------------


def test_jax_and_torch_give_the_same_numbers(typed, torch, tmp_path):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((3, 4)).astype(np.float32)
    v = rng.standard_normal(4).astype(np.float32)
    x = rng.standard_normal(6)
    np.save(tmp_path / "A.npy", A)
    np.save(tmp_path / "v.npy", v)
    np.save(tmp_path / "x.npy", x)
    script = textwrap.dedent(
        f"""
        import sys, numpy as np
        import jax
        jax.config.update("jax_enable_x64", True)
        sys.path.insert(0, {str(typed.out)!r})
        import e2e_typed as m
        d = {str(tmp_path)!r}
        np.save(d + "/matvec.npy", np.asarray(m.matvec(np.load(d + "/A.npy"), np.load(d + "/v.npy"))))
        np.save(d + "/scale.npy", np.asarray(m.scale(np.load(d + "/x.npy"), s=0.3)))
        v = np.load(d + "/v.npy")
        np.save(d + "/tile.npy", np.asarray(m.tile(v, out=jax.ShapeDtypeStruct((4, 3), "float32"))))
        np.save(d + "/untyped.npy", np.asarray(m.untyped(v, a=0.7, out=jax.ShapeDtypeStruct((4,), "float32"))))
        """
    )
    proc = subprocess.run([jax_python(), "-c", script], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    m = typed.module
    from_jax = np.load(tmp_path / "matvec.npy")
    np.testing.assert_array_equal(m.matvec(torch.from_numpy(A), torch.from_numpy(v)).numpy(), from_jax)
    np.testing.assert_array_equal(m.scale(torch.from_numpy(x), s=0.3).numpy(), np.load(tmp_path / "scale.npy"))
    # out= ops: the JAX side's ShapeDtypeStruct, torch's tensor or spec.
    tv = torch.from_numpy(v)
    np.testing.assert_array_equal(m.tile(tv, out=torch.empty(4, 3)).numpy(), np.load(tmp_path / "tile.npy"))
    got = m.untyped(tv, a=0.7, out=Spec((4,), torch.float32)).numpy()
    np.testing.assert_array_equal(got, np.load(tmp_path / "untyped.npy"))


def test_torch_alone_builds_without_jax_and_writes_only_its_files(torch, tmp_path):
    import importlib.util

    assert importlib.util.find_spec("jax") is None, "this test needs a Python without jax"
    out, cache = tmp_path / "out", tmp_path / "cache"
    tree = __import__("conftest").REPO / "tests" / "e2e" / "typed"
    env = torch_only_env()
    # Its own name: the typed fixture's namespace may be loaded already.
    args = ("build", tree, "--out", out, "--name", "alone", "--target", "torch")
    proc = run_begen(*args, cache=cache, env=env)
    assert "XLA" not in proc.stderr, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["alone_torch.py", "alone_torch.pyi", "libalone_torch.so"]
    m = import_module(out, "alone_torch")
    x, y = torch.arange(4.0), torch.ones(4)
    np.testing.assert_array_equal(m.axpy(x, y, a=2.0).numpy(), 2 * x.numpy() + 1)
    # Nothing changed: nothing compiles, links or is written again.
    lib = out / "libalone_torch.so"
    before = lib.stat().st_mtime_ns
    again = run_begen(*args, cache=cache, env=env)
    assert "built " in again.stderr and " 0 TUs compiled" in again.stderr, again.stderr
    assert lib.stat().st_mtime_ns == before


def test_a_failed_link_of_one_target_commits_no_target(torch, tmp_path):
    # torch's library is linked first here and may leave symbols for torch
    # to resolve; jax's refuses one that is undefined: the build fails at
    # the second link, and OUT keeps the first build's torch library.
    tree, out, cache = tmp_path / "src", tmp_path / "out", tmp_path / "cache"
    tree.mkdir()
    kernel = "// @BE f arg:float32[n] ret:float32[n] dim.n\nvoid f(const float* x, float* y, long n) {{ {} }}\n"
    (tree / "k.cpp").write_text(kernel.format("for (long i = 0; i < n; ++i) y[i] = x[i] + 1;"))
    run_begen("build", tree, "--out", out, "--name", "k", "--target", "torch,jax", "-q", cache=cache)
    lib = (out / "libk_torch.so").read_bytes()
    (tree / "k.cpp").write_text("void nowhere();\n" + kernel.format("nowhere();"))
    proc = run_begen("build", tree, "--out", out, "--name", "k", "--target", "torch,jax", check=False, cache=cache)
    assert proc.returncode != 0 and "libk.so" in proc.stderr, proc.stderr
    assert (out / "libk_torch.so").read_bytes() == lib
    assert sorted(p.name for p in out.iterdir()) == [
        "k.py",
        "k.pyi",
        "k.yaml",
        "k_torch.py",
        "k_torch.pyi",
        "libk.so",
        "libk_torch.so",
    ]
    m = import_module(out, "k_torch")
    np.testing.assert_array_equal(m.f(torch.zeros(3)).numpy(), np.ones(3))


def test_an_unknown_target_in_begen_yaml_is_located(torch, tmp_path):
    (tmp_path / "k.cpp").write_text(
        "// @BE f arg:float32[n] ret:float32[n] dim.n\nvoid f(const float* x, float* y, long n) {}\n"
    )
    (tmp_path / "begen.yaml").write_text("name: k\ntargets: [jax, troch]\n")
    proc = run_begen("scan", tmp_path, check=False)
    assert proc.returncode == 1
    assert "unknown target 'troch': the targets are jax, torch; did you mean 'torch'?" in proc.stderr
    assert "begen.yaml:2:16" in proc.stderr
