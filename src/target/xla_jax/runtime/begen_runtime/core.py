"""Section `core` (every module): the registration state, the XLA FFI version
gate, the targets every begen library in the process has registered, and the
checks every kernel's function runs on its inputs.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

import ctypes as _ctypes
import os as _os
import threading as _threading

import jax as _jax
import numpy as _np

# The generated module defines these for its library.
LIBRARY = _os.path.join(_os.getcwd(), "libbegen_runtime.so")
_FFI_API_SYMBOL = "begen_begen_runtime_ffi_api"
_BEGEN_WIDE = ("int64", "uint64", "float64", "complex128")
_BEGEN_BUILD = ""

# begen: emit below

_lock = _threading.Lock()
_lib = None
_registered = False


def _begen_library_file():
    # The library file this module goes with. begen commits a build's four
    # outputs with one rename each, the module's last; before the library is
    # replaced, the one this module was built with is kept beside it under a
    # name from this module's build, until the new module is in place (then
    # removed). A process that imports the module in between, or after a
    # build killed in between, loads the library of its own build.
    kept = _os.path.join(
        _os.path.dirname(LIBRARY), "." + _os.path.basename(LIBRARY) + ".begen-old-" + _BEGEN_BUILD
    )
    return kept if _BEGEN_BUILD and _os.path.isfile(kept) else LIBRARY


# The XLA FFI version gate. XLA registers a handler only if the FFI API
# version it was compiled against is one it supports; otherwise the call
# fails later with "No FFI handler registered". register() compares first.


def _begen_parse_api(text):
    # "0.3" -> (0, 3); None for anything else.
    try:
        major, minor = str(text).split(".")
        return int(major), int(minor)
    except (ValueError, AttributeError):
        return None


def _begen_built_ffi_api():
    # The version the library was compiled against: it records it itself.
    try:
        fn = getattr(_lib, _FFI_API_SYMBOL)
    except AttributeError:
        return None
    fn.restype = _ctypes.c_char_p
    return fn().decode()


def _begen_running_ffi_api():
    # The running jaxlib's, from the XLA FFI headers it ships (jaxlib has no
    # Python constant for it); None when they are not there.
    try:
        path = _os.path.join(_jax.ffi.include_dir(), "xla", "ffi", "api", "c_api.h")
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except Exception:
        return None
    found = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) == 3 and words[0] == "#define" and words[1] in ("XLA_FFI_API_MAJOR", "XLA_FFI_API_MINOR"):
            found[words[1]] = words[2]
    if len(found) != 2:
        return None
    return f"{found['XLA_FFI_API_MAJOR']}.{found['XLA_FFI_API_MINOR']}"


def _begen_check_ffi_api():
    # Same major version, and a minor version the running XLA knows (it
    # supports older ones; a newer one may use what it does not have).
    built, running = _begen_built_ffi_api(), _begen_running_ffi_api()
    b, r = _begen_parse_api(built), _begen_parse_api(running)
    if b is None or r is None or (b[0] == r[0] and b[1] <= r[1]):
        return
    import sys

    try:
        import jaxlib

        jaxlib_version = jaxlib.__version__
    except Exception:
        jaxlib_version = "?"
    raise RuntimeError(
        f"{__name__}: {_os.path.basename(LIBRARY)} was built against XLA FFI API {built}, but the running jaxlib "
        f"{jaxlib_version} has XLA FFI API {running}, so XLA would not register its handlers (and could fail to "
        f"start its backend); nothing was registered. Rebuild it for every jaxlib from {jaxlib_version} on: "
        f"`begen build --jax-min {jaxlib_version}` (begen.yaml `jax_min: \"{jaxlib_version}\"`), or against this "
        f"jaxlib itself with BEGEN_PYTHON={sys.executable}; or install a jaxlib whose XLA FFI API is {built} or newer."
    )


# Targets registered by every begen library in this process, shared by the
# generated modules of any begen version through one entry of sys.modules:
# its `targets` maps (target, platform) to the real path of the library that
# registered it, and its `lock` guards it. XLA refuses a second handler for a
# target only when its backend starts, and then the whole backend fails; a
# second library registering a target is refused here first, by name.
_begen_table_name = "_begen_ffi_targets"


def _begen_shared_targets():
    import sys

    shared = sys.modules.get(_begen_table_name)
    if shared is None:
        fresh = type(sys)(_begen_table_name)
        fresh.targets = {}
        fresh.lock = _threading.Lock()
        shared = sys.modules.setdefault(_begen_table_name, fresh)
    return shared


def _begen_register_targets(handlers, register):
    # Every (target, symbol, platform) of `handlers` is registered with
    # register(target, symbol, platform), unless this library registered it
    # already. A target another library registered refuses the whole set
    # before any of it reaches XLA.
    shared = _begen_shared_targets()
    library = _os.path.realpath(LIBRARY)
    with shared.lock:
        taken = [
            (target, platform, shared.targets[(target, platform)])
            for target, _, platform in handlers
            if shared.targets.get((target, platform), library) != library
        ]
        if taken:
            target, platform, other = taken[0]
            more = f" (and {len(taken) - 1} more of its targets)" if len(taken) > 1 else ""
            raise RuntimeError(
                f"{__name__}: cannot register {_os.path.basename(LIBRARY)} ({library}): its FFI target {target!r} "
                f"({platform}){more} is already registered by {other}, and XLA takes one handler per target. "
                f"Use one of the two libraries in this process (a development build and an installed wheel of the "
                f"same kernels, say), or give one another prefix (begen.yaml `prefix:`)."
            )
        for target, symbol, platform in handlers:
            if (target, platform) not in shared.targets:
                register(target, symbol, platform)
                shared.targets[(target, platform)] = library


def _begen_text(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _begen_show(value):
    return f"{_begen_text(value)} ({type(value).__name__})"


# Every kernel's inputs. Run at trace time only: under jit they cost
# nothing per call. Every error names the kernel and the parameter.


def _begen_dtype(x):
    # The numpy name of an array's or struct's element type.
    return _np.dtype(x.dtype).name


def _begen_named(name, call):
    # `call` (an FFI call) traced under jax.named_scope(name): the kernel's
    # name leads the op_name XLA keeps on its custom call, which HLO dumps
    # and profiler traces show (jit(f)/rmsnorm/ffi_call, not the bare
    # jit(f)/ffi_call), under jit, eagerly and inside a primitive's rules.
    def run(*args, **attrs):
        with _jax.named_scope(name):
            return call(*args, **attrs)

    return run


def _begen_honest(fn, arrays, names):
    # A 64-bit numpy input with x64 off would reach the kernel narrowed to
    # 32 bits, silently: refuse it.
    if _jax.config.jax_enable_x64:
        return
    for x, name in zip(arrays, names):
        dtype = getattr(x, "dtype", None)
        if dtype is not None and _np.dtype(dtype).name in _BEGEN_WIDE:
            raise TypeError(
                f"{fn}: parameter '{name}' is {_np.dtype(dtype).name}, but JAX's x64 mode is off, so JAX would "
                f"pass it narrowed to 32 bits; convert it, or enable x64 (jax.config.update('jax_enable_x64', True))"
            )


# vmap of a primitive that carries its batch axes in front (`primitives`,
# `sharding`): its batching rule.


def _begen_batch_front(args, dims):
    # (the new batch axis's size, every input with that axis in front): a
    # batched input's axis moved there, an unbatched input broadcast.
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    moved = [_jax.numpy.moveaxis(a, d, 0) if d is not None else None for a, d in zip(args, dims)]
    split = _begen_front_split(moved)
    for i, (a, d) in enumerate(zip(args, dims)):
        if d is None:
            moved[i] = _jax.numpy.broadcast_to(a, (size, *_jax.numpy.shape(a)))
            if split is not None:
                # Split like the batched inputs (vmap needs its batch axis
                # split alike in every input): each device's slice.
                moved[i] = _jax.sharding.reshard(moved[i], split)
    return size, moved


def _begen_front_split(moved):
    # The NamedSharding splitting only the front axis as the first batched
    # input's type splits it along explicit mesh axes; None when it is not.
    for x in (x for x in moved if x is not None):
        try:
            sharding = _jax.typeof(x).sharding
            spec = tuple(sharding.spec)
            entry = spec[0] if spec else None
            names = (entry,) if isinstance(entry, str) else tuple(entry or ())
            types = dict(zip(sharding.mesh.axis_names, sharding.mesh.axis_types))
            explicit = names and not any(types[n] != _jax.sharding.AxisType.Explicit for n in names)
        except Exception:
            explicit = False  # no sharding in its type (an older JAX, a plain value)
        if explicit:
            from jax.sharding import NamedSharding, PartitionSpec

            return NamedSharding(sharding.mesh, PartitionSpec(entry))
    return None


# Eager calls. A call outside every trace (no jit, grad, vmap or shard_map
# around it, every input a concrete array) runs as a jax.jit of its own
# function, one per function, keyed by the call's other arguments: the
# checks, the custom_vjp or primitive and the FFI call are traced once per
# shapes, dtypes and keyword values, as under the caller's own jit, and a
# repeated call costs one jit dispatch. A call this cannot key exactly (an
# unhashable value, a Python number as an input, a 64-bit numpy input with
# x64 off, which jit would narrow before the check that refuses it) takes
# the plain path, which is what the jit traces anyway: its checks and
# results are the same either way, and a call whose trace raises is run
# the plain way again, so that its error is raised exactly as before.

# (the concrete array type, JAX's trace context, the disable_jit flag, the
# dtypes of _BEGEN_WIDE, the error of a run); False where this JAX lacks
# them (every call takes the plain path).
_begen_eager_state = None
# function -> the jax.jit of its plain path.
_begen_jits = {}


def _begen_eager_init():
    global _begen_eager_state
    try:
        from jax._src import config, core
        from jax._src.array import ArrayImpl

        wide = {_np.dtype(name): True for name in _BEGEN_WIDE}
        errors = _jax.errors
        failed = getattr(errors, "JaxRuntimeError", None) or errors.XlaRuntimeError
        _begen_eager_state = (ArrayImpl, core.trace_ctx, config.disable_jit, wide, failed)
        _begen_eager_state[1].is_top_level()
        bool(_begen_eager_state[2].value)
    except Exception:
        _begen_eager_state = False
    return _begen_eager_state


class _BegenStatic:
    # The keyword values of an eager call as a jit static argument: equal
    # and hashed by their key (`_begen_frozen`), holding the values
    # themselves in `values`.
    __slots__ = ("hash", "key", "values")

    def __init__(self, key, values):
        self.key = key
        self.values = values
        self.hash = key.__hash__()

    def __hash__(self):
        return self.hash

    def __eq__(self, other):
        return type(other) is _BegenStatic and self.key == other.key

    def __repr__(self):
        return repr(self.values)


def _begen_frozen(v):
    # A hashable key for one keyword value, equal only for values every
    # check and conversion treats alike (1, 1.0 and True differ, and so do
    # 0.0 and -0.0); None for a value it cannot key (a NaN, an array).
    t = type(v)
    if t is float:
        # Equal floats have equal bits, but for zeros' signs and NaNs.
        if v != v:  # noqa: PLR0124 (a NaN)
            return None
        return (t, v) if v else (t, repr(v))
    if v is None or t is int or t is bool or t is str:
        return (t, v)
    if isinstance(v, _np.generic):
        return (t, v.tobytes())
    if t is tuple or t is list:
        return _begen_frozen_items(t, v)
    if t is dict:
        items = _begen_frozen_items(t, v.values())
        return None if items is None else (items, _begen_frozen_items(t, v))
    if t is complex:
        real, imag = _begen_frozen(v.real), _begen_frozen(v.imag)
        return None if real is None or imag is None else (t, real, imag)
    if isinstance(v, (type, _np.dtype, _jax.ShapeDtypeStruct)):
        try:
            t.__hash__(v)
        except TypeError:
            return None
        return (t, v)
    return None


def _begen_frozen_items(t, values):
    # _begen_frozen of a sequence's items, under its type `t`.
    items = [t]
    for e in values:
        k = _begen_frozen(e)
        if k is None:
            return None
        items.append(k)
    return tuple(items)


def _begen_eager(arrays, keywords, extra=()):
    # The static argument of an eager call of a function with these inputs
    # and keyword values ({name: value}), and `extra`, what else its trace
    # depends on (a tuned kernel's tables); None: the call takes the plain
    # path.
    if extra is None:
        return None
    state = _begen_eager_state
    if not state:
        if state is False:
            return None
        state = _begen_eager_init()
        if not state:
            return None
    array, ctx, disabled, wide, _ = state
    if disabled.value or not ctx.is_top_level():
        return None
    # With x64 off, a 64-bit input must reach the plain path's refusal.
    narrow = not _jax.config.jax_enable_x64
    for x in arrays:
        t = type(x)
        if t is list or t is tuple:
            # A list of arrays (a binary kernel's): every element concrete.
            for e in x:
                if type(e) is not array or (narrow and e.dtype in wide):
                    return None
            continue
        if t is not array and (t is not _np.ndarray or x.dtype.kind not in "biufc"):
            return None
        if narrow and x.dtype in wide:
            return None
    key = _begen_frozen_items(extra, keywords.values())
    return None if key is None else _BegenStatic(key, keywords)


def _begen_jit(fn, static, *arrays):
    # An eager call of `fn` through its jax.jit (made on its first one;
    # static argument: the call's _BegenStatic); `_begen_eager` when the
    # trace raised: the caller then takes the plain path, which raises the
    # same error as a plain call would (jit would re-raise it with its
    # traceback filtered and a note added). Nothing ran yet then: an error
    # of the run itself is raised as it is.
    j = _begen_jits.get(fn)
    if j is None:

        def plain(static, *arrays):
            return fn(*arrays, **static.values)

        plain.__name__ = plain.__qualname__ = fn.__name__
        j = _begen_jits.setdefault(fn, _jax.jit(plain, static_argnums=0))
    try:
        return j(static, *arrays)
    except _begen_eager_state[4]:
        raise
    except Exception:
        return _begen_eager
