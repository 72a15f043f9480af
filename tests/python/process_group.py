"""A group of processes run together and always reaped (the multi-process
sharding tests: tests/python/test_e2e_multiprocess.py on CPUs and
tests/gpu/check_multiprocess.py on GPUs).

`run_group(commands, env, timeout_s)` starts every command at once, waits for
all of them within `timeout_s` seconds in total, and returns
`[(returncode, stdout, stderr)]` in order. If the group runs past the
deadline every process is killed and `TimeoutError` is raised: one hung
collective must not leave the others waiting forever.
"""

import subprocess
import time


def free_port():
    # A TCP port free on 127.0.0.1 now, for a coordinator to listen on.
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_group(commands, env, timeout_s):
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for cmd in commands
    ]
    deadline = time.monotonic() + timeout_s
    outputs = []
    try:
        for p in procs:
            try:
                outputs.append(p.communicate(timeout=max(deadline - time.monotonic(), 0.1)))
            except subprocess.TimeoutExpired:
                raise TimeoutError(f"the {len(procs)}-process group ran past {timeout_s} s") from None
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
    return [(p.returncode, out, err) for p, (out, err) in zip(procs, outputs)]
