"""Section `tuning` (a kernel declared under `tune:`): which compiled-in
candidate a call runs, chosen when the call is traced, never per call.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

import os as _os
import threading as _threading

import jax as _jax
import numpy as _np

# The generated module defines these for its library.
LIBRARY = _os.path.join(_os.getcwd(), "libbegen_runtime.so")
# kernel -> its tuning declaration: the FFI target, the platform, the tuned
# consts (a tuned source's defines after them) with their built values
# (canonical text) and declared default, the key dims, the hash of what the
# candidates are compiled from, and, where `where:` leaves combinations
# out, the built ones ("candidates").
_BEGEN_TUNE = {}

# begen: emit below

# The choice of a tuned kernel's candidate. A call whose tuned consts are
# all given (as keywords or `config=`) runs that candidate. Otherwise the
# candidate comes from the first of: BEGEN_TUNE=default|off (the declared
# default), the user's table, the table shipped beside the module, the
# entry of the nearest bucket on the same device, the declared default. It
# runs at trace time only: under jit the lowered call names one candidate's
# target, and the choice costs nothing per call.

_BEGEN_TUNE_FORMAT = 1
# A table larger than this is refused unread: tables hold a few entries per
# kernel and shape, and reading one must not take a process's memory.
_BEGEN_TUNE_MAX_BYTES = 16 << 20
# Tables nest an entry's fields in an object in a list in the top-level
# object: deeper nesting is refused, before Python's recursion limit (a
# table nested 100,000 deep) can fail with an error naming no file.
_BEGEN_TUNE_MAX_DEPTH = 16
_begen_tune_lock = _threading.Lock()
# path -> ((mtime_ns, size), entries): a table is parsed once per change.
_begen_tune_tables = {}
# (path, kernel, why) already warned about: each stale entry warns once.
_begen_tune_warned = set()


class _BegenTuneTableError(ValueError):
    """A tuning table that cannot be read as one: it names the file."""


def _begen_tune_text(fn, kind, value):
    # A const value as its canonical text ("128", "true"), as the targets
    # of the candidates are keyed; None when it is not of the const's kind.
    if kind == "bool":
        if isinstance(value, str) and value in ("true", "false"):
            return value
        return ("true" if value else "false") if isinstance(value, bool) else None
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            return str(int(value, 10))
        except ValueError:
            return None
    try:
        return str(int(value)) if int(value) == value else None
    except (TypeError, ValueError, OverflowError):
        return None


def _begen_tune_value(kind, text):
    # A const's canonical text as the Python value its keyword takes.
    return text == "true" if kind == "bool" else int(text)


def _begen_tune_fixed(fn, config, given):
    # The tuned consts the caller fixed, by keyword (`given`: const ->
    # value or None) or by `config=`, each checked against the built
    # candidates. Returns (every tuned const's value as its keyword takes
    # it, the default's where not fixed; the names fixed).
    spec = _BEGEN_TUNE[fn]
    consts = spec["consts"]
    fixed = {}
    if config is not None:
        if not isinstance(config, dict):
            raise TypeError(f"{fn}: config= takes a dict of tuned parameters, got {type(config).__name__}")
        for name, value in config.items():
            if name not in consts:
                known = ", ".join(consts)
                raise ValueError(f"{fn}: config= names {name!r}, which is not a tuned parameter of {fn} ({known})")
            fixed[name] = value
    for name, value in given.items():
        if value is None:
            continue
        kind = consts[name][0]
        if name in fixed and _begen_tune_text(fn, kind, fixed[name]) != _begen_tune_text(fn, kind, value):
            raise ValueError(f"{fn}: {name}={value!r} and config={{{name!r}: {fixed[name]!r}}} disagree")
        fixed[name] = value
    values = {}
    for name, (kind, built, default) in consts.items():
        text = _begen_tune_text(fn, kind, fixed[name]) if name in fixed else default
        if text not in built:
            raise ValueError(
                f"{fn}: {name}={fixed[name]!r} is not a built candidate; {name} is one of {', '.join(built)}"
            )
        values[name] = _begen_tune_value(kind, text)
    return values, set(fixed)


def _begen_tune_built(fn, c):
    # `c` (the call's consts, canonical text), refused when it names a
    # combination `where:` left out of the build.
    spec = _BEGEN_TUNE[fn]
    built = spec.get("candidates")
    if built is None:
        return c
    combo = tuple(c[n] for n in spec["consts"])
    if combo not in built:
        shown = ", ".join(f"{n}={v}" for n, v in zip(spec["consts"], combo))
        raise ValueError(f"{fn}: {shown} is not a built candidate: the `where:` of its tuning leaves it out")
    return c


def _begen_tune_bucket(v):
    # A key dim's bucket: the power of two at or above it (0 stays 0).
    v = int(v)
    return 0 if v <= 0 else 1 << (v - 1).bit_length()


# platform -> the device kind its calls lower for, asked once: a process's
# devices do not change.
_begen_tune_kinds = {}


def _begen_tune_device(platform):
    # The kind of the devices the call lowers for: the kernel's platform's.
    kind = _begen_tune_kinds.get(platform)
    if kind is None:
        try:
            kind = _jax.devices("gpu" if platform == "cuda" else "cpu")[0].device_kind
        except RuntimeError:
            return None
        _begen_tune_kinds[platform] = kind
    return kind


def _begen_tune_key(fn, d, dtypes, extents=None):
    # (device kind, dtypes, bucketed key dims) of a call; None when a key
    # dim is not a plain integer (a symbolic extent under jax.export).
    spec = _BEGEN_TUNE[fn]
    dims = {}
    for name in spec["key"]:
        v = (extents or {}).get(name, d[name][0] if name in d else None)
        try:
            dims[name] = _begen_tune_bucket(v)
        except Exception:
            # A symbolic extent (jax.export) has no bucket.
            return None
    device = _begen_tune_device(spec["platform"])
    return None if device is None else (device, tuple(dtypes), dims)


def _begen_tune_user_table():
    # The user's table: BEGEN_TUNE_DIR, else begen's per-user cache.
    root = _os.environ.get("BEGEN_TUNE_DIR")
    if not root:
        cache = _os.environ.get("XDG_CACHE_HOME") or _os.path.join(_os.path.expanduser("~"), ".cache")
        root = _os.path.join(cache, "begen", "tune")
    return _os.path.join(root, _os.path.basename(LIBRARY)[3:-3] + ".tune.json")


def _begen_tune_shipped_table():
    # The table shipped beside the module: OUT's `<NAME>.tune.json`.
    return _os.path.join(_os.path.dirname(LIBRARY), _os.path.basename(LIBRARY)[3:-3] + ".tune.json")


def _begen_tune_parse(path, data):
    # A table's entries, each checked for shape; anything else is an error
    # naming the file.
    import json

    def bad(why):
        return _BegenTuneTableError(f"{path}: not a begen tuning table: {why}")

    deep = f"nested more than {_BEGEN_TUNE_MAX_DEPTH} levels deep"
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise bad(f"invalid JSON ({e})") from None
    except RecursionError:
        raise bad(deep) from None
    if _begen_tune_depth(doc) > _BEGEN_TUNE_MAX_DEPTH:
        raise bad(deep)
    if not isinstance(doc, dict) or doc.get("begen_tune") != _BEGEN_TUNE_FORMAT:
        raise bad(f'the top level must be an object with "begen_tune": {_BEGEN_TUNE_FORMAT}')
    entries = doc.get("entries")
    if not isinstance(entries, list):
        raise bad('"entries" must be a list')
    checked = []
    for i, e in enumerate(entries):
        ok = (
            isinstance(e, dict)
            and isinstance(e.get("kernel"), str)
            and isinstance(e.get("hash"), str)
            and isinstance(e.get("device"), str)
            and isinstance(e.get("dtypes"), list)
            and not [t for t in e["dtypes"] if not isinstance(t, str)]
            and isinstance(e.get("key"), dict)
            and not [v for v in e["key"].values() if not isinstance(v, int) or isinstance(v, bool)]
            and isinstance(e.get("config"), dict)
            and not [v for v in e["config"].values() if not isinstance(v, str)]
        )
        if not ok:
            raise bad(
                f'entry {i} must have "kernel", "hash", "device" (strings), "dtypes" (strings), '
                f'"key" (dim -> integer) and "config" (parameter -> text)'
            )
        checked.append(e)
    return checked


def _begen_tune_depth(doc):
    # How deep lists and objects nest in `doc` (a scalar: 0), without
    # recursion.
    deepest, stack = 0, [(doc, 1)]
    while stack:
        v, depth = stack.pop()
        items = v.values() if isinstance(v, dict) else v if isinstance(v, list) else None
        if items is None:
            continue
        deepest = max(deepest, depth)
        stack.extend((x, depth + 1) for x in items)
    return deepest


def _begen_tune_stat(path, what="begen tuning table"):
    # The status of the regular file at `path`, None when nothing is there;
    # anything else (a FIFO, a directory, a device, a socket, a link to one
    # of them, a dangling link) is an error naming it: reading one would
    # block, fail or never end, and replacing it would lose what it is.
    import stat

    try:
        link = _os.lstat(path)
    except OSError:
        return None
    try:
        st = _os.stat(path)
    except OSError:
        raise _BegenTuneTableError(f"{path}: not a {what}: a dangling symbolic link, not a regular file") from None
    if stat.S_ISREG(st.st_mode):
        return st
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    kind = next((k for test, k in kinds if test(st.st_mode)), "a special file")
    if stat.S_ISLNK(link.st_mode):
        kind = f"a symbolic link to {kind}"
    raise _BegenTuneTableError(f"{path}: not a {what}: {kind}, not a regular file")


def _begen_tune_entries(path):
    # The entries of the table at `path` ([] when there is none), parsed
    # once per change of the file.
    st = _begen_tune_stat(path)
    if st is None:
        return []
    stamp = (st.st_mtime_ns, st.st_size)
    with _begen_tune_lock:
        hit = _begen_tune_tables.get(path)
        if hit is not None and hit[0] == stamp:
            return hit[1]
    if st.st_size > _BEGEN_TUNE_MAX_BYTES:
        raise _BegenTuneTableError(
            f"{path}: not a begen tuning table: {st.st_size} bytes, over the {_BEGEN_TUNE_MAX_BYTES} a table may have"
        )
    try:
        with open(path, "rb") as f:
            data = f.read(_BEGEN_TUNE_MAX_BYTES + 1)
    except OSError as e:
        raise _BegenTuneTableError(f"{path}: cannot read the tuning table: {e.strerror}") from None
    entries = _begen_tune_parse(path, data)
    with _begen_tune_lock:
        _begen_tune_tables[path] = (stamp, entries)
    return entries


def _begen_tune_warn(path, fn, why):
    key = (path, fn, why)
    with _begen_tune_lock:
        if key in _begen_tune_warned:
            return
        _begen_tune_warned.add(key)
    import warnings

    warnings.warn(f"{path}: the tuning entry of {fn} is ignored: {why}", stacklevel=4)


def _begen_tune_foreign(path, entries, shipped):
    # Warns, once per table and names, of entries that name no kernel of
    # this library: every such entry of the shipped table (it is this
    # library's alone), and in the user's table (shared by every library of
    # the same NAME, whose entries are none of this one's business) those
    # that name one of its kernels with a package prefix more or less: a
    # table exported from `begen build` names `_kernels.matmul` where a
    # hook-built wheel's target is `proj._kernels.matmul`.
    import difflib

    known = sorted({spec["target"] for spec in _BEGEN_TUNE.values()})
    shown = []
    for kernel in sorted({e["kernel"] for e in entries} - set(known)):
        near = [t for t in known if t.endswith("." + kernel) or kernel.endswith("." + t)]
        if not near and shipped:
            near = difflib.get_close_matches(kernel, known, 1)
        if near:
            shown.append(f"{kernel!r} (did you mean {near[0]!r}?)")
        elif shipped:
            shown.append(repr(kernel))
    if not shown:
        return
    key = (path, "foreign", tuple(shown))
    with _begen_tune_lock:
        if key in _begen_tune_warned:
            return
        _begen_tune_warned.add(key)
    import warnings

    warnings.warn(
        f"{path}: tuning entries naming no kernel of this library are ignored: {', '.join(shown)}; its tuned "
        f"kernels are {', '.join(repr(t) for t in known)} (tune again, or export the table from the library as "
        f"it is shipped)",
        stacklevel=4,
    )


def _begen_tune_usable(path, fn, e, key, fixed, c):
    # Whether entry `e` of the table at `path` applies to a call of `fn`
    # with this device and these dtypes: for this kernel as built now (else
    # a warning, once), agreeing with the consts the caller fixed.
    spec = _BEGEN_TUNE[fn]
    if e["kernel"] != spec["target"] or e["device"] != key[0] or tuple(e["dtypes"]) != key[1]:
        return False
    if set(e["key"]) != set(key[2]):
        return False
    if e["hash"] != spec["hash"]:
        _begen_tune_warn(path, fn, "the kernel's sources changed since it was tuned (tune it again)")
        return False
    consts = spec["consts"]
    built = spec.get("candidates")
    if (
        set(e["config"]) != set(consts)
        or any(e["config"][n] not in consts[n][1] for n in consts)
        or (built is not None and tuple(e["config"][n] for n in consts) not in built)
    ):
        _begen_tune_warn(path, fn, f"its candidate {e['config']} is not one this build holds")
        return False
    return not [n for n in fixed if e["config"][n] != c[n]]


def _begen_tune_distance(a, b):
    # How far apart two bucketed keys are: the sum of their log2 distances.
    far = 0
    for k in a:
        step = a[k].bit_length() - b[k].bit_length()
        far += step if step > 0 else -step
    return far


def _begen_tune_lookup(fn, key, fixed, c):
    # The config the tables give for `key`: an exact bucket from the user's
    # table, then the shipped one; else the nearest bucket of either (the
    # user's first on a tie); None when neither has an entry that applies.
    nearest = None
    for path, shipped in ((_begen_tune_user_table(), False), (_begen_tune_shipped_table(), True)):
        entries = _begen_tune_entries(path)
        _begen_tune_foreign(path, entries, shipped)
        for e in entries:
            if not _begen_tune_usable(path, fn, e, key, fixed, c):
                continue
            if e["key"] == key[2]:
                return e["config"]
            far = _begen_tune_distance(e["key"], key[2])
            if nearest is None or far < nearest[0]:
                nearest = (far, e["config"])
    return None if nearest is None else nearest[1]


def _begen_tune_record(path, fn, d, dtypes, extents):
    # `begen tune --record`: the call's dims (per shard under sharding) and
    # dtypes, one JSON line per traced call.
    import json

    dims = {}
    for name, (v, _) in d.items():
        v = (extents or {}).get(name, v)
        if isinstance(v, int):
            dims[name] = v
    line = json.dumps({"kernel": fn, "dims": dims, "dtypes": list(dtypes)})
    with _begen_tune_lock, open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def _begen_tune_dtypes(arrays):
    # The inputs' dtype names, as a key holds them.
    out = []
    for a in arrays:
        dtype = getattr(a, "dtype", None)
        out.append(_np.dtype(dtype if dtype is not None else _np.asarray(a).dtype).name)
    return tuple(out)


def _begen_tune_pick(fn, c, d, arrays, fixed, extents=None):
    # The consts `c` of a call (the tuned ones the caller's or the
    # defaults, as `_begen_inputs` resolved them) with the tuned ones the
    # tables choose for the call's key (its inputs' dtypes, its key dims),
    # unless the caller fixed every one or BEGEN_TUNE says not to.
    spec = _BEGEN_TUNE[fn]
    dtypes = _begen_tune_dtypes(arrays)
    at = spec.get("key_at")
    if at:
        # Key dims of a kernel without typed contracts: an input's extent
        # along an axis (None, so no bucket, where it has no such axis).
        d = dict(d)
        for name, i, axis in at:
            shape = _np.shape(arrays[i])
            d[name] = (shape[axis] if axis < len(shape) else None, None)
    record = _os.environ.get("BEGEN_TUNE_RECORD")
    if record:
        _begen_tune_record(record, fn, d, dtypes, extents)
    mode = _os.environ.get("BEGEN_TUNE", "")
    if mode not in ("", "default", "off"):
        raise ValueError(f"BEGEN_TUNE={mode!r}: it takes 'default' or 'off' (or is unset)")
    if len(fixed) == len(spec["consts"]) or mode:
        return _begen_tune_built(fn, c)
    key = _begen_tune_key(fn, d, dtypes, extents)
    found = None if key is None else _begen_tune_lookup(fn, key, fixed, c)
    if found is None:
        return _begen_tune_built(fn, c)
    out = dict(c)
    out.update(found)
    return out


def _begen_tune_chosen(fn, c, name):
    # The value of tuned const `name` in the candidate a call of `fn` runs
    # (`c`, as `_begen_tune_pick` chose it), as its keyword takes it: what a
    # related kernel that does not tune it is called with.
    return _begen_tune_value(_BEGEN_TUNE[fn]["consts"][name][0], c[name])


def _begen_tune_state():
    # What a tuned kernel's eager call chooses with beyond its arguments,
    # as part of its key (`_begen_eager`): BEGEN_TUNE and where the user's
    # table is. Like a jit's trace, an eager call's choice is made once per
    # key: a table written later serves new keys, a new process, or every
    # key after jax.clear_caches(). None while `begen tune --record`
    # records every call.
    env = _os.environ
    if env.get("BEGEN_TUNE_RECORD"):
        return None
    return (env.get("BEGEN_TUNE"), env.get("BEGEN_TUNE_DIR"), env.get("XDG_CACHE_HOME"))
