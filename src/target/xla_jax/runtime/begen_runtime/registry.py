"""Section `registry` (every module): `registry`, the library's algorithms and
their implementations (none when begen.yaml has no `algorithms:`).

Above the `# begen: emit below` line: only what this file needs on its own.
"""

# The generated module defines this: name -> (fallback, implementations, best first).
_ALGORITHMS = {}

# begen: emit below


class _BegenRegistry:
    """The library's algorithms and their implementations (begen.yaml's `algorithms:`).

    `algorithms()` lists the names; `implementations(name)` the
    implementations, best first; `get(name)` the dispatching function,
    `get(name, platform="cpu")` the best implementation's function for a
    platform, `get(name, function="add_cuda")` a specific one's.
    """

    def algorithms(self):
        return list(_ALGORITHMS)

    def implementations(self, algorithm):
        if algorithm not in _ALGORITHMS:
            raise KeyError(f"{__name__}: no algorithm {algorithm!r}; the algorithms are {', '.join(_ALGORITHMS) or 'none'}")
        return list(_ALGORITHMS[algorithm][1])

    def get(self, algorithm, *, platform=None, function=None):
        implementations = self.implementations(algorithm)
        if function is not None:
            for impl in implementations:
                if function in (impl.function, impl.call.__name__):
                    return impl.call
            names = ", ".join(i.function for i in implementations)
            raise KeyError(f"{__name__}: algorithm {algorithm!r} has no implementation {function!r}; it has {names}")
        if platform is not None:
            platform = "cuda" if platform == "gpu" else platform
            for impl in implementations:
                if impl.platform == platform:
                    return impl.call
            raise KeyError(f"{__name__}: algorithm {algorithm!r} has no implementation for platform {platform!r}")
        return globals()[algorithm]

    def __repr__(self):
        rows = [
            f"  {a}: " + ", ".join(f"{i.function} ({i.platform}, {i.priority})" for i in self.implementations(a))
            for a in _ALGORITHMS
        ]
        return "\n".join([f"<{__name__} registry: {len(_ALGORITHMS)} algorithm(s)>", *rows])


#: The library's algorithms and their implementations.
registry = _BegenRegistry()
