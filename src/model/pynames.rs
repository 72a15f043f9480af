//! The names of the generated Python module's world, in one place: the
//! modules it imports (a library of one of their names, or of any module
//! JAX imports, would hide it or be hidden by it) and the names it defines
//! or calls (a function, module or parameter of one of them would replace
//! it). `check` refuses and renames by these lists; `emit` prints the
//! imports from them; `emit`'s runtime tests prove they match the runtime
//! files (`src/target/xla_jax/runtime/begen_runtime/`) and the template.

use super::ident::Words;

/// One top-level import of the generated module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PyImport {
    /// The top-level module it imports.
    pub(crate) module: &'static str,
    /// The statement, exactly as a runtime section's header writes it.
    pub(crate) statement: &'static str,
    /// The name it binds in the module.
    pub(crate) binds: &'static str,
    /// Not part of Python's standard library (printed after a blank line).
    pub(crate) third_party: bool,
}

const fn import(module: &'static str, statement: &'static str, binds: &'static str, third_party: bool) -> PyImport {
    PyImport { module, statement, binds, third_party }
}

/// Every top-level import a generated module may have, in the order it
/// prints them (standard library first, as isort and ruff sort them).
pub(crate) const PY_IMPORTS: [PyImport; 10] = [
    import("ctypes", "import ctypes as _ctypes", "_ctypes", false),
    import("os", "import os as _os", "_os", false),
    import("sys", "import sys as _sys", "_sys", false),
    import("threading", "import threading as _threading", "_threading", false),
    import("types", "import types as _types", "_types", false),
    import("typing", "from typing import NamedTuple as _NamedTuple", "_NamedTuple", false),
    import("jax", "import jax as _jax", "_jax", true),
    import("numpy", "import numpy as _np", "_np", true),
    import("ml_dtypes", "import ml_dtypes as _ml_dtypes", "_ml_dtypes", true),
    // At module load, not on the first trace: importing it changes JAX's
    // trace context, so a jitted function's first call would miss its cache.
    import("jax", "from jax.extend.core import Primitive as _JaxPrimitive", "_JaxPrimitive", true),
];

/// Modules the generated module imports inside its functions (the version
/// gate's `sys` and `jaxlib`, `jax.export`, the linked libraries' `nvidia`,
/// the tuning tables' `json` and `stat`).
pub(crate) const PY_LATE_IMPORTS: [&str; 9] =
    ["sys", "jaxlib", "jax", "nvidia", "warnings", "json", "stat", "functools", "difflib"];

/// The third-party modules JAX imports by top-level name (its dependencies)
/// or tries to at start-up (its plugins' namespace `jax_plugins`, the GPU and
/// TPU plugins it looks for, optional helpers), beside those above: a
/// library of one of their names, first on `sys.path`, would be imported in
/// their place (a `jax_plugins.py` fails every computation). Found by
/// logging every import JAX 0.12 tries while it starts a backend and jits,
/// and by reading `jaxlib/plugin_support.py` and `jax/_src/xla_bridge.py`.
const JAX_STARTUP_IMPORTS: [&str; 20] = [
    "opt_einsum",
    "scipy",
    "typing_extensions",
    "flatbuffers",
    "nvidia",
    "jax_plugins",
    "jax_cuda12_plugin",
    "jax_cuda13_plugin",
    "jax_rocm10_plugin",
    "jax_rocm7_plugin",
    "jax_rocm60_plugin",
    "jax_oneapi_plugin",
    "libtpu",
    "cloudpickle",
    "etils",
    "filelock",
    "pygments",
    "web_pdb",
    "zstandard",
    "compression",
];

/// Python's standard library (`sys.stdlib_module_names` of Python 3.11):
/// JAX imports many of these, and a module of one of their names is either
/// never imported (a module built into the interpreter or imported at
/// start-up, such as `sys` or `os`) or hides the real one from everything
/// in the process that imports it later.
const PY_STDLIB: [&str; 305] = [
    "__future__",
    "_abc",
    "_aix_support",
    "_ast",
    "_asyncio",
    "_bisect",
    "_blake2",
    "_bootsubprocess",
    "_bz2",
    "_codecs",
    "_codecs_cn",
    "_codecs_hk",
    "_codecs_iso2022",
    "_codecs_jp",
    "_codecs_kr",
    "_codecs_tw",
    "_collections",
    "_collections_abc",
    "_compat_pickle",
    "_compression",
    "_contextvars",
    "_crypt",
    "_csv",
    "_ctypes",
    "_curses",
    "_curses_panel",
    "_datetime",
    "_dbm",
    "_decimal",
    "_elementtree",
    "_frozen_importlib",
    "_frozen_importlib_external",
    "_functools",
    "_gdbm",
    "_hashlib",
    "_heapq",
    "_imp",
    "_io",
    "_json",
    "_locale",
    "_lsprof",
    "_lzma",
    "_markupbase",
    "_md5",
    "_msi",
    "_multibytecodec",
    "_multiprocessing",
    "_opcode",
    "_operator",
    "_osx_support",
    "_overlapped",
    "_pickle",
    "_posixshmem",
    "_posixsubprocess",
    "_py_abc",
    "_pydecimal",
    "_pyio",
    "_queue",
    "_random",
    "_scproxy",
    "_sha1",
    "_sha256",
    "_sha3",
    "_sha512",
    "_signal",
    "_sitebuiltins",
    "_socket",
    "_sqlite3",
    "_sre",
    "_ssl",
    "_stat",
    "_statistics",
    "_string",
    "_strptime",
    "_struct",
    "_symtable",
    "_thread",
    "_threading_local",
    "_tkinter",
    "_tokenize",
    "_tracemalloc",
    "_typing",
    "_uuid",
    "_warnings",
    "_weakref",
    "_weakrefset",
    "_winapi",
    "_zoneinfo",
    "abc",
    "aifc",
    "antigravity",
    "argparse",
    "array",
    "ast",
    "asynchat",
    "asyncio",
    "asyncore",
    "atexit",
    "audioop",
    "base64",
    "bdb",
    "binascii",
    "bisect",
    "builtins",
    "bz2",
    "cProfile",
    "calendar",
    "cgi",
    "cgitb",
    "chunk",
    "cmath",
    "cmd",
    "code",
    "codecs",
    "codeop",
    "collections",
    "colorsys",
    "compileall",
    "concurrent",
    "configparser",
    "contextlib",
    "contextvars",
    "copy",
    "copyreg",
    "crypt",
    "csv",
    "ctypes",
    "curses",
    "dataclasses",
    "datetime",
    "dbm",
    "decimal",
    "difflib",
    "dis",
    "distutils",
    "doctest",
    "email",
    "encodings",
    "ensurepip",
    "enum",
    "errno",
    "faulthandler",
    "fcntl",
    "filecmp",
    "fileinput",
    "fnmatch",
    "fractions",
    "ftplib",
    "functools",
    "gc",
    "genericpath",
    "getopt",
    "getpass",
    "gettext",
    "glob",
    "graphlib",
    "grp",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "http",
    "idlelib",
    "imaplib",
    "imghdr",
    "imp",
    "importlib",
    "inspect",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "keyword",
    "lib2to3",
    "linecache",
    "locale",
    "logging",
    "lzma",
    "mailbox",
    "mailcap",
    "marshal",
    "math",
    "mimetypes",
    "mmap",
    "modulefinder",
    "msilib",
    "msvcrt",
    "multiprocessing",
    "netrc",
    "nis",
    "nntplib",
    "nt",
    "ntpath",
    "nturl2path",
    "numbers",
    "opcode",
    "operator",
    "optparse",
    "os",
    "ossaudiodev",
    "pathlib",
    "pdb",
    "pickle",
    "pickletools",
    "pipes",
    "pkgutil",
    "platform",
    "plistlib",
    "poplib",
    "posix",
    "posixpath",
    "pprint",
    "profile",
    "pstats",
    "pty",
    "pwd",
    "py_compile",
    "pyclbr",
    "pydoc",
    "pydoc_data",
    "pyexpat",
    "queue",
    "quopri",
    "random",
    "re",
    "readline",
    "reprlib",
    "resource",
    "rlcompleter",
    "runpy",
    "sched",
    "secrets",
    "select",
    "selectors",
    "shelve",
    "shlex",
    "shutil",
    "signal",
    "site",
    "smtpd",
    "smtplib",
    "sndhdr",
    "socket",
    "socketserver",
    "spwd",
    "sqlite3",
    "sre_compile",
    "sre_constants",
    "sre_parse",
    "ssl",
    "stat",
    "statistics",
    "string",
    "stringprep",
    "struct",
    "subprocess",
    "sunau",
    "symtable",
    "sys",
    "sysconfig",
    "syslog",
    "tabnanny",
    "tarfile",
    "telnetlib",
    "tempfile",
    "termios",
    "textwrap",
    "this",
    "threading",
    "time",
    "timeit",
    "tkinter",
    "token",
    "tokenize",
    "tomllib",
    "trace",
    "traceback",
    "tracemalloc",
    "tty",
    "turtle",
    "turtledemo",
    "types",
    "typing",
    "unicodedata",
    "unittest",
    "urllib",
    "uu",
    "uuid",
    "venv",
    "warnings",
    "wave",
    "weakref",
    "webbrowser",
    "winreg",
    "winsound",
    "wsgiref",
    "xdrlib",
    "xml",
    "xmlrpc",
    "zipapp",
    "zipfile",
    "zipimport",
    "zlib",
    "zoneinfo",
];

/// Whether a Python module named `name` would hide a module the generated
/// code or JAX imports, or be hidden by it.
///
/// ```ignore
/// assert!(shadows_py_module("typing") && !shadows_py_module("mykernels"));
/// ```
pub(crate) fn shadows_py_module(name: &str) -> bool {
    PY_IMPORTS.iter().any(|i| i.module == name)
        || PY_LATE_IMPORTS.contains(&name)
        || JAX_STARTUP_IMPORTS.contains(&name)
        || PY_STDLIB.binary_search(&name).is_ok()
}

/// Names the generated Python module and its stub define or use at their
/// top level (src/target/xla_jax/templates/module.py and module.pyi, the runtime
/// sections), besides its imports' names, and the builtins they call: a
/// function, module or parameter of one of these names would hide one, so
/// it gets a `_` appended. Every name starting with `_begen` is reserved
/// too (see [`is_py_reserved`]).
pub(crate) const PY_RESERVED: [&str; 86] = [
    // The module's own names (the template's and the runtime's).
    "register",
    "registry",
    "deserialize",
    "TARGETS",
    "LIBRARY",
    "MODULES",
    "_lock",
    "_lib",
    "_registered",
    "_HANDLERS",
    "_LINKED",
    "_FFI_API_SYMBOL",
    "_ALGORITHMS",
    "_BEGEN_WIDE",
    "_BEGEN_BUILD",
    "_BEGEN_TUNE",
    "_BEGEN_PARTITIONED",
    "_BEGEN_GRADS",
    "_BEGEN_RULES",
    "_BEGEN_STATES",
    "_BEGEN_TUNE_FORMAT",
    "_BEGEN_TUNE_MAX_BYTES",
    "_BEGEN_TUNE_MAX_DEPTH",
    "_BegenTuneTableError",
    "_BegenImplementation",
    "_BegenRegistry",
    "_BegenCall",
    "_BegenJointCall",
    "_BegenStatic",
    "export_safety_checks",
    // Builtins the runtime and the typed functions call.
    "tuple",
    "list",
    "dict",
    "str",
    "bytes",
    "bytearray",
    "isinstance",
    "set",
    "frozenset",
    "len",
    "any",
    "map",
    "range",
    "sorted",
    "open",
    "globals",
    "TypeError",
    "ValueError",
    "OverflowError",
    "KeyError",
    "RuntimeError",
    "NotImplementedError",
    "next",
    "AttributeError",
    "ImportError",
    "Exception",
    "int",
    "float",
    "bool",
    "complex",
    "type",
    "repr",
    "getattr",
    "hasattr",
    "locals",
    "super",
    "zip",
    "enumerate",
    "object",
    "OSError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    // The stub's names.
    "jax",
    "ArrayLike",
    "Final",
    "type_check_only",
    "Any",
    "Callable",
    "Sequence",
    "staticmethod",
    "None",
    "print",
    "all",
    "iter",
    "max",
    "RecursionError",
];

/// Whether `name` is one the generated module defines, imports or calls:
/// [`PY_RESERVED`], an import's name, or in begen's own `_begen` space.
pub(crate) fn is_py_reserved(name: &str) -> bool {
    static SET: Words = Words::new(&[&PY_RESERVED]);
    name.starts_with("_begen") || SET.contains(name) || PY_IMPORTS.iter().any(|i| i.binds == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standard_library_list_is_sorted_for_binary_search() {
        assert!(PY_STDLIB.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn modules_the_generated_code_or_jax_imports_are_refused() {
        for name in ["typing", "jaxlib", "functools", "math", "abc", "io", "site", "numpy", "jax", "ml_dtypes", "os"] {
            assert!(shadows_py_module(name), "{name}");
        }
        // What JAX imports or tries to import at start-up: its plugin
        // namespace, the plugins it looks for, optional helpers.
        for name in ["jax_plugins", "jax_cuda12_plugin", "jax_cuda13_plugin", "jax_rocm60_plugin", "libtpu", "etils"] {
            assert!(shadows_py_module(name), "{name}");
        }
        for name in ["mykernels", "e2e_cpu", "k", "ops", "Typing", "begen"] {
            assert!(!shadows_py_module(name), "{name}");
        }
    }

    #[test]
    fn reserved_names() {
        for name in ["_begen_x", "_BEGEN_WIDE", "_ALGORITHMS", "_np", "_NamedTuple", "open", "register"] {
            assert!(is_py_reserved(name), "{name}");
        }
        for name in ["scale", "min", "begen_x"] {
            assert!(!is_py_reserved(name), "{name}");
        }
    }
}
