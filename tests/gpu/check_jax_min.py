"""The version gate on a GPU (scripts/gpu-check.sh, step `jaxmin`).

OUT holds gpu_typed built elsewhere against a newer jaxlib's XLA FFI headers
than this machine's: register() must refuse it with the message that names
both API versions and `--jax-min`, before anything reaches XLA, and JAX's
GPU backend must keep working afterwards in the same process.

usage: python tests/gpu/check_jax_min.py OUT
"""

import sys

import jax
import jax.numpy as jnp
import jaxlib

sys.path.insert(0, sys.argv[1])
import gpu_typed as m  # noqa: E402

try:
    m.register()
except Exception as e:  # noqa: BLE001 - the refusal's type is the runtime's
    text = str(e)
    print(f"refused: {type(e).__name__}: {text}")
    assert "--jax-min" in text, text
    assert jaxlib.__version__ in text, text
else:
    raise SystemExit("check_jax_min: a library built against newer XLA FFI headers was registered")
x = jnp.arange(8.0)
assert float((x * 2).sum()) == 56.0
assert jax.default_backend() == "gpu"
print(f"check_jax_min: refused on jaxlib {jaxlib.__version__}, GPU backend alive ({jax.devices()[0].device_kind})")
