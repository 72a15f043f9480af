"""The platform tag a wheel holding one built library can promise: read from
the library's ELF dynamic section (the libraries it needs) and its
``.gnu.version_r`` (the symbol versions it needs from each), with no tool
beyond Python.

A ``manylinux_2_Y`` tag (PEP 600) promises that the library loads on any
Linux with glibc 2.Y or newer. It holds when every library the ``.so`` needs
is one that such a system provides (glibc's, ``libstdc++``, ``libgcc_s``),
and every symbol version it needs from them is one that glibc 2.Y and the
``libstdc++`` of that generation have. When a needed library is not such
a one (``link: libs:`` from pip's ``nvidia`` packages, say), or the machine
is not x86_64, only the plain ``linux_<arch>`` tag holds.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

# The libraries a manylinux system provides (PEP 600's policies, as
# auditwheel lists them; the X11/GL/glib ones are left out: kernels never
# need them).
_SYSTEM_LIBS = frozenset(
    {
        "libc.so.6",
        "libm.so.6",
        "libmvec.so.1",
        "libdl.so.2",
        "librt.so.1",
        "libpthread.so.0",
        "libutil.so.1",
        "libanl.so.1",
        "libnsl.so.1",
        "libresolv.so.2",
        "libgcc_s.so.1",
        "libstdc++.so.6",
        "libatomic.so.1",
        "libz.so.1",
        "ld-linux-x86-64.so.2",
    }
)

# x86_64: the newest libstdc++ / libgcc_s symbol versions each manylinux
# level allows (GLIBCXX, CXXABI, GCC), from the PEP 600 policies as
# auditwheel publishes them. A level between two rows allows what the
# lower row allows.
_CXX_LEVELS = (
    (17, (3, 4, 19), (1, 3, 7), (4, 8, 0)),
    (24, (3, 4, 22), (1, 3, 10), (4, 8, 0)),
    (27, (3, 4, 24), (1, 3, 11), (7, 0, 0)),
    (31, (3, 4, 28), (1, 3, 12), (7, 0, 0)),
    (34, (3, 4, 29), (1, 3, 13), (7, 0, 0)),
    (35, (3, 4, 30), (1, 3, 13), (12, 0, 0)),
    (39, (3, 4, 33), (1, 3, 15), (14, 0, 0)),
)
# manylinux_2_17 (manylinux2014) is the oldest level pip's of today install.
_FLOOR = 17

_SHT_DYNAMIC = 6
_SHT_GNU_VERNEED = 0x6FFFFFFE
_DT_NEEDED = 1
_EM_X86_64 = 62
_VERSION = re.compile(r"(GLIBC|GLIBCXX|CXXABI|GCC)_(\d+(?:\.\d+)*)\Z")


class ElfError(ValueError):
    """The file is not a 64-bit little-endian ELF shared library that can be read."""


def read_needs(path: Path) -> tuple[int, list[str], dict[str, set[str]]]:
    """The ELF machine, the libraries ``path`` needs (``DT_NEEDED``) and the
    symbol versions it needs from each (``.gnu.version_r``)."""
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF" or len(data) < 64 or data[4] != 2 or data[5] != 1:
        raise ElfError(f"{path}: not a 64-bit little-endian ELF file")
    machine = struct.unpack_from("<H", data, 18)[0]
    (shoff,) = struct.unpack_from("<Q", data, 40)
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    sections = []
    for i in range(shnum):
        at = shoff + i * shentsize
        if at + 64 > len(data):
            raise ElfError(f"{path}: section header {i} is past the end of the file")
        _, kind, _, _, offset, size, link, _, _, entsize = struct.unpack_from("<IIQQQQIIQQ", data, at)
        sections.append((kind, offset, size, link, entsize))

    def string(section: int, at: int) -> str:
        if section >= len(sections):
            raise ElfError(f"{path}: a string table index is out of range")
        start = sections[section][1] + at
        end = data.find(b"\0", start)
        if start >= len(data) or end < 0:
            raise ElfError(f"{path}: a string is past the end of the file")
        return data[start:end].decode("utf-8", "replace")

    needed: list[str] = []
    versions: dict[str, set[str]] = {}
    for kind, offset, size, link, _ in sections:
        if kind == _SHT_DYNAMIC:
            for at in range(offset, min(offset + size, len(data) - 15), 16):
                tag, value = struct.unpack_from("<qQ", data, at)
                if tag == _DT_NEEDED:
                    needed.append(string(link, value))
        elif kind == _SHT_GNU_VERNEED:
            at, seen = offset, 0
            while 0 <= at <= len(data) - 16 and seen < 4096:
                _, count, file, aux, nxt = struct.unpack_from("<HHIII", data, at)
                names = versions.setdefault(string(link, file), set())
                entry = at + aux
                for _ in range(count):
                    if not 0 <= entry <= len(data) - 16:
                        raise ElfError(f"{path}: a version entry is past the end of the file")
                    _, _, _, name, step = struct.unpack_from("<IHHII", data, entry)
                    names.add(string(link, name))
                    entry += step
                seen += 1
                if nxt == 0:
                    break
                at += nxt
    return machine, needed, versions


def _parse(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def manylinux_level(needed: list[str], versions: dict[str, set[str]]) -> tuple[int | None, str]:
    """The lowest glibc minor version Y whose ``manylinux_2_Y`` holds for a
    library needing ``needed`` and ``versions`` (x86_64), or None, and why."""
    foreign = sorted(lib for lib in needed if lib not in _SYSTEM_LIBS)
    if foreign:
        return None, f"it needs {', '.join(foreign)}, which a manylinux system does not provide"
    highest: dict[str, tuple[int, ...]] = {}
    for names in versions.values():
        for name in names:
            m = _VERSION.match(name)
            if m:
                got = _parse(m.group(2))
                highest[m.group(1)] = max(highest.get(m.group(1), got), got)
    glibc = highest.get("GLIBC", (2, 0))
    level = max(_FLOOR, glibc[1] if len(glibc) > 1 else 0)
    cxx = [highest.get(k, (0,)) for k in ("GLIBCXX", "CXXABI", "GCC")]
    for row_level, *caps in _CXX_LEVELS:
        if all(need <= cap for need, cap in zip(cxx, caps)):
            return max(level, row_level), "from its symbol versions"
    shown = ", ".join(f"{k}_{'.'.join(map(str, v))}" for k, v in sorted(highest.items()) if k != "GLIBC")
    return None, f"its C++ runtime needs ({shown}) are newer than any manylinux level begen knows"


def platform_tag(library: Path, fallback: str) -> tuple[str, str]:
    """The wheel platform tag for ``library`` (``manylinux_2_Y_x86_64``, or
    ``fallback``, the plain ``linux_<arch>`` tag), and why."""
    machine, needed, versions = read_needs(library)
    if machine != _EM_X86_64:
        return fallback, "manylinux tags are computed for x86_64 only"
    level, why = manylinux_level(needed, versions)
    if level is None:
        return fallback, why
    return f"manylinux_2_{level}_x86_64", why
