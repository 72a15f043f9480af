

def test_hook_settings_of_another_type_are_refused_by_name(hatch, tmp_path):  # noqa: F811 (the fixture)
    """Values the fuzz run found reaching begen's command line or the file
    system unchecked: each is refused with the hook's message."""
    root = tmp_path / "p"
    (root / "kernels").mkdir(parents=True)
    for config, said in [
        ({"include-dirs": {"a": True}}, "`include-dirs`"),
        ({"include-dirs": "inc"}, "`include-dirs`"),
        ({"arch": [90]}, "`arch`"),
        ({"name": True}, "`name`"),
        ({"jax-min": 0.1}, "`jax-min`"),
        ({"build-dir": datetime.date(2020, 1, 2)}, "`build-dir`"),
        ({"kernels": ["k"]}, "`kernels`"),
    ]:
        try:
            hook(hatch, root, **config)._settings()
        except ValueError as e:
            assert str(e).startswith(f"begen hook: {said}"), (config, e)
        else:
            raise AssertionError(f"{config!r} was accepted")
    long = "9" * 300 + ".d"
    settings = hook(hatch, root, **{"build-dir": long})._settings()
    try:
        hatch._checked_build_dir(root, settings["build-dir"], "kernels", [])
    except ValueError as e:
        assert str(e).startswith("begen hook: `build-dir`"), e
    else:
        raise AssertionError("a build-dir name too long was accepted")
