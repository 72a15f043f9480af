"""What the tests/gpu/check_*.py scripts share: `check(name, fn)` runs one
check and prints PASS or FAIL (with the traceback), and the next check runs
after a failure; `failed` lists the names of those that failed."""

import traceback

failed = []


def check(name, fn):
    try:
        fn()
    except Exception:  # every failure is reported, then the next check runs
        failed.append(name)
        print(f"FAIL {name}")
        traceback.print_exc(limit=3)
        return
    print(f"PASS {name}")
