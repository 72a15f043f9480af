"""Calls that once read past a buffer or computed garbage, now refused or
right: an integer attribute named like an input's dimension checked against
that input's extent at trace time (the kernel trusts it as a length); a
dimension received by any LP64 spelling of an integer type (`long`,
`size_t`, `std::int64_t`, `unsigned long`, `int64_t const`, ...); an out=
that is not a ShapeDtypeStruct refused naming the kernel."""

import numpy as np
import pytest
from conftest import import_module, run_begen

KERNEL = """\
#include <cstddef>
#include <cstdint>

#include "brainevent/common.h"

// @BE total arg:float32[n] ret:float32[] attr.n:int64
void total(const float* x, float* y, int64_t n) {
    float s = 0;
    for (int64_t i = 0; i < n; ++i) s += x[i];
    *y = s;
}
"""

# One kernel per spelling of the parameter that receives dimension n.
DIM_TYPES = ["long", "size_t", "std::int64_t", "unsigned long", "int64_t const", "std::size_t", "ptrdiff_t",
             "long long int", "unsigned", "std::uint32_t", "long unsigned int", "const std::ptrdiff_t"]
for i, ty in enumerate(DIM_TYPES):
    KERNEL += f"""
// @BE twice{i} arg:float32[n] ret:float32[n] dim.n
void twice{i}(const float* x, float* y, {ty} n) {{
    for (long long i = 0; i < static_cast<long long>(n); ++i) y[i] = 2 * x[i];
}}
"""


@pytest.fixture(scope="module")
def m(jax_cpu, tmp_path_factory):
    root = tmp_path_factory.mktemp("hardening")
    src = root / "kernels"
    src.mkdir()
    (src / "k.cpp").write_text(KERNEL)
    out = root / "out"
    run_begen("build", src, "--out", out, "--name", "hardening", "--platform", "cpu", "--quiet")
    return import_module(out, "hardening")


def test_an_attribute_named_like_an_input_dimension_must_equal_its_extent(m, jax_cpu):
    jax = jax_cpu
    x = np.arange(16, dtype=np.float32)
    assert float(m.total(x, n=16)) == 120.0
    assert float(jax.jit(lambda v: m.total(v, n=16))(x)) == 120.0
    np.testing.assert_array_equal(jax.vmap(lambda v: m.total(v, n=16))(np.stack([x, x])), [120.0, 120.0])
    with pytest.raises(ValueError, match=r"total: dimension 'n' is 16 \(from 'x' axis 0\) but attribute 'n' is 1000000000"):
        m.total(x, n=10**9)
    with pytest.raises(ValueError, match=r"total: dimension 'n' is 16 .* attribute 'n' is 15"):
        jax.jit(lambda v: m.total(v, n=15))(x)
    with pytest.raises(TypeError, match=r"total: attribute 'n' sizes dimension 'n': it takes an integer"):
        m.total(x, n=16.0)


@pytest.mark.parametrize("i", range(len(DIM_TYPES)), ids=DIM_TYPES)
def test_a_dimension_received_by_any_integer_type(m, jax_cpu, i):
    x = np.arange(7, dtype=np.float32)
    np.testing.assert_array_equal(getattr(m, f"twice{i}")(x), 2 * x)


def test_out_takes_a_struct_for_one_output(m, jax_cpu):
    x = np.arange(16, dtype=np.float32)
    struct = jax_cpu.ShapeDtypeStruct((), np.float32)
    assert float(m.total(x, n=16, out=struct)) == 120.0
    with pytest.raises(TypeError, match=r"^total: out= takes a jax.ShapeDtypeStruct; got \(ShapeDtypeStruct.*\(tuple\) for output 'y'$"):
        m.total(x, n=16, out=(struct,))
    with pytest.raises(TypeError, match=r"^total: out= takes a jax.ShapeDtypeStruct; got 3 \(int\) for output 'y'$"):
        m.total(x, n=16, out=3)
