"""Bad inputs every reader of a tuning table must refuse alike: the module's
call-time reader (begen_runtime/tuning.py), `begen tune` (which reads with
the module's reader) and the build's check of a shipped table
(src/check/options/tune.rs). Each test that reads tables feeds all of these.

`make_kind(path, kind)` makes each kind of path that is no regular file.
"""

import json
import os
import socket
import stat

ENTRY = {"kernel": "k", "hash": "h", "device": "cpu", "dtypes": ["float32"], "key": {"n": 64}, "config": {"B": "1"}}


def table(*entries, **top):
    return json.dumps({"begen_tune": 1, "entries": list(entries), **top}).encode()


def nested(depth):
    # An entry whose extra field nests `depth` lists deep (the table then
    # nests depth + 3: the top level, the entries, the entry).
    return table(dict(ENTRY, times_us="[" * depth + "]" * depth)).replace(
        b'"' + b"[" * depth + b"]" * depth + b'"', b"[" * depth + b"]" * depth
    )


# (case, the table's bytes, what each reader's error says).
BAD_TABLES = [
    ("truncated", b'{"begen_tune": 1, "entries": [', "invalid JSON"),
    ("not utf-8", b'{"begen_tune": 1, "entries": ["\xff"]}', "invalid JSON"),
    ("empty", b"", "invalid JSON"),
    ("a list", b"[]", 'the top level must be an object with "begen_tune": 1'),
    ("format 2", b'{"begen_tune": 2, "entries": []}', 'the top level must be an object with "begen_tune": 1'),
    ("format as text", b'{"begen_tune": "1", "entries": []}', 'the top level must be an object with "begen_tune": 1'),
    ("no entries", b'{"begen_tune": 1}', '"entries" must be a list'),
    ("entries an object", b'{"begen_tune": 1, "entries": {}}', '"entries" must be a list'),
    ("entry a number", table(1), "entry 0 must have"),
    ("kernel a number", table(dict(ENTRY, kernel=1)), "entry 0 must have"),
    ("no hash", table({k: v for k, v in ENTRY.items() if k != "hash"}), "entry 0 must have"),
    ("dtypes text", table(dict(ENTRY, dtypes="float32")), "entry 0 must have"),
    ("dtype a number", table(dict(ENTRY, dtypes=[32])), "entry 0 must have"),
    ("key a bool", table(dict(ENTRY, key={"n": True})), "entry 0 must have"),
    ("key a float", table(dict(ENTRY, key={"n": 64.0})), "entry 0 must have"),
    ("key a list", table(dict(ENTRY, key=[64])), "entry 0 must have"),
    ("config a number", table(dict(ENTRY, config={"B": 1})), "entry 0 must have"),
    ("second entry", table(ENTRY, dict(ENTRY, config=None)), "entry 1 must have"),
    ("17 deep", nested(14), "nested more than 16 levels deep"),
    ("200 deep", nested(200), "nested more than 16 levels deep"),
    ("100000 deep", b"[" * 100_000 + b"]" * 100_000, "nested more than 16 levels deep"),
]

# What `make_kind` makes, each named as the readers name it.
KINDS = {
    "fifo": "a FIFO",
    "directory": "a directory",
    "socket": "a socket",
    "char device": "a character device",
    "link to a char device": "a symbolic link to a character device",
    "link to a block device": "a symbolic link to a block device",
    "link to a fifo": "a symbolic link to a FIFO",
    "link to a directory": "a symbolic link to a directory",
    "dangling link": "a dangling symbolic link",
}


def block_device():
    """A block device of this machine, or None."""
    try:
        for e in os.scandir("/dev"):
            try:
                if stat.S_ISBLK(os.stat(e.path).st_mode):
                    return e.path
            except OSError:
                continue
    except OSError:
        pass
    return None


def make_kind(path, kind):
    """Makes `path` the `kind` of KINDS; returns what keeps it alive (a
    socket), or raises OSError where this machine cannot make it."""
    path = str(path)
    aside = path + ".target"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        os.mkdir(path)
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(path)
        return s
    elif kind == "char device":
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
    elif kind == "link to a char device":
        os.symlink("/dev/zero", path)
    elif kind == "link to a block device":
        dev = block_device()
        if dev is None:
            raise OSError("this machine shows no block device")
        os.symlink(dev, path)
    elif kind == "link to a fifo":
        os.mkfifo(aside)
        os.symlink(aside, path)
    elif kind == "link to a directory":
        os.mkdir(aside)
        os.symlink(aside, path)
    elif kind == "dangling link":
        os.symlink(aside, path)
    else:
        raise ValueError(kind)
    return None


def same_kind(path, kind):
    """Whether `path` is still what `make_kind` made."""
    path = str(path)
    st = os.lstat(path)
    if kind.startswith("link") or kind == "dangling link":
        return stat.S_ISLNK(st.st_mode)
    test = {
        "fifo": stat.S_ISFIFO,
        "directory": stat.S_ISDIR,
        "socket": stat.S_ISSOCK,
        "char device": stat.S_ISCHR,
    }[kind]
    return test(st.st_mode)
