"""Sections `unsupported`, `algorithms`, `registry`, `vjp`, `modules` and
`linked`."""

import sys
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from begen_runtime import algorithms, linked, modules, registry, unsupported, vjp

# Runs in scripts/test.sh's jax lane too: under each older jax release.
pytestmark = pytest.mark.jax_lane


def test_unsupported_values_are_refused_by_value():
    unsupported._begen_refuse("f", {"alpha": (1.0, (0.0, -1.0))})
    for value in (0.0, 0, np.float32(-1.0)):
        with pytest.raises(ValueError, match=r"^f does not support alpha=.* \(begen.yaml: unsupported\)$"):
            unsupported._begen_refuse("f", {"alpha": (value, (0.0, -1.0))})
    assert unsupported._begen_refusal("f", {"mode": ("a", (0,))}) is None
    assert not unsupported._begen_same_value(np.zeros(3), 0)  # an array is no attribute value


def test_unsupported_nan_is_matched_by_isnan():
    nan = float("nan")
    for value in (nan, np.float32("nan"), np.float16("nan"), complex(nan, 0.0)):
        with pytest.raises(ValueError, match=r"^f does not support alpha=.*nan"):
            unsupported._begen_refuse("f", {"alpha": (value, (0.0, nan))})
    for value in (1.0, 0.5, 3, np.float32(2.0), float("inf")):
        if value != 0.0:
            assert unsupported._begen_refusal("f", {"alpha": (value, (nan,))}) is None
    assert not unsupported._begen_same_value("nan", nan)
    assert not unsupported._begen_same_value(np.full(3, nan), nan)  # an array is no attribute value


def impl(function, platform, priority, call, unsupported=None, renames=None):
    return algorithms._BegenImplementation("add", function, platform, priority, unsupported or {}, call, renames or {})


def fast(x, *, alpha):
    return x * alpha


def slow(x, *, a):
    return x + a


@pytest.fixture()
def table(monkeypatch):
    rows = {
        "add": (True, (impl("fast", "cpu", 10, fast, {"alpha": (0.0,)}), impl("slow", "cpu", 0, slow, None, {"alpha": "a"}),
                       impl("gpu", "cuda", 5, fast))),
        "strict": (False, (impl("fast", "cpu", 1, fast, {"alpha": (0.0,)}), impl("slow", "cpu", 0, slow))),
    }
    monkeypatch.setattr(algorithms, "_ALGORITHMS", rows)
    monkeypatch.setattr(registry, "_ALGORITHMS", rows)
    monkeypatch.setattr(registry, "add", lambda *a, **k: "dispatched", raising=False)
    return rows


def test_dispatch_takes_the_best_implementation_that_supports_the_call(table):
    x = jnp.arange(3.0)
    assert algorithms._begen_dispatch("add", (x,), {"alpha": 2.0}).tolist() == [0.0, 2.0, 4.0]  # fast: x * alpha
    assert algorithms._begen_dispatch("add", (x,), {"alpha": 0.0}).tolist() == [0.0, 1.0, 2.0]  # slow, renamed: x + a
    with pytest.raises(ValueError, match=r"strict: no implementation supports this call: 'fast' \(cpu, priority 1\) "
                                         r"does not support alpha=0.0 .*\(the algorithm does not fall back"):
        algorithms._begen_dispatch("strict", (x,), {"alpha": 0.0})


def test_the_platform_names_jaxs_default_backend():
    assert algorithms._begen_platform() == ("cuda" if jax.default_backend() == "gpu" else jax.default_backend())


def test_the_registry_lists_and_finds_implementations(table):
    r = registry._BegenRegistry()
    assert r.algorithms() == ["add", "strict"]
    assert [i.function for i in r.implementations("add")] == ["fast", "slow", "gpu"]
    assert r.get("add", function="slow") is slow
    assert r.get("add", platform="gpu").__name__ == "fast"
    assert r.get("add")() == "dispatched"
    with pytest.raises(KeyError, match="no algorithm 'nope'; the algorithms are add, strict"):
        r.implementations("nope")
    with pytest.raises(KeyError, match="has no implementation 'x'; it has fast, slow"):
        r.get("strict", function="x")
    with pytest.raises(KeyError, match="no implementation for platform 'cuda'"):
        r.get("strict", platform="cuda")
    assert repr(r).splitlines() == [
        "<begen_runtime.registry registry: 2 algorithm(s)>",
        "  add: fast (cpu, 10), slow (cpu, 0), gpu (cuda, 5)",
        "  strict: fast (cpu, 1), slow (cpu, 0)",
    ]


def test_an_empty_registry(monkeypatch):
    monkeypatch.setattr(registry, "_ALGORITHMS", {})
    assert registry.registry.algorithms() == [] and "0 algorithm(s)" in repr(registry.registry)


def test_the_vjp_calls_the_backward_kernel_with_one_cotangent_per_output():
    calls = []

    def backward(x, n, ct):
        calls.append(ct)
        return 3 * ct * jnp.ones_like(x), jnp.zeros_like(n)

    def f(x, n):
        return vjp._begen_vjp(lambda x, n: x * 2.0, backward, (x, n), 1)

    g = jax.grad(lambda x: f(x, jnp.int32(4)).sum())(jnp.ones(3))
    assert g.tolist() == [3.0, 3.0, 3.0] and len(calls) == 1
    assert vjp._begen_aval(2.0).dtype == jnp.result_type(2.0) and not vjp._begen_inexact(jnp.int32(1))


def test_a_module_builder_becomes_a_real_module():
    def ops():
        """Module ops."""

        def neg(x):
            return -x

        return locals()

    module = modules._begen_module(ops)
    try:
        assert isinstance(module, types.ModuleType) and module.__doc__ == "Module ops."
        assert sys.modules["begen_runtime.modules.ops"] is module
        assert module.neg(2) == -2 and module.neg.__module__ == "begen_runtime.modules.ops"
        assert module.neg.__qualname__ == "neg" and module.register is modules.register
    finally:
        sys.modules.pop("begen_runtime.modules.ops", None)


def test_preloading_a_library_pip_does_not_have_does_nothing():
    assert linked._begen_preload("begen_no_such_library") is None
