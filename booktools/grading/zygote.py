"""The process that runs answers, inside the grading sandbox: a plain script (it imports nothing of the book's, which
the sandbox does not show), started by booktools/grading/worker.py as `python -I zygote.py`.

It imports torch and numpy once, then for each job the grader sends on its stdin it forks a child that runs the job's
context (an exercise's imports and the classes and data it builds on) in a namespace of its own, then forks from it a
grandchild for each of the job's runs (an answer, the hidden test, and the driver that calls it), so that the
context runs once for many answers and no answer sees another's. Each run hands back only arrays: the driver's
`_result({...})`, saved as an npz without pickles. The children's stdout and stderr go nowhere the grader reads;
results come back over pipes of their own.

Between jobs every process below this one is ended (it is their subreaper: an orphan of any of them becomes its
child), so nothing an answer leaves behind is running when the next exercise's answer runs. Each reply carries the nonce the grader sent
with its job: a reply written by anything else (a process that opened this process's stdout through /proc) does not
carry the next job's nonce, which is drawn only once the job before it has ended, and the grader rejects it.

Frames, both ways: 8 bytes of big-endian length, then that many bytes of JSON.
"""

import base64
import io
import json
import os
import select
import signal
import struct
import sys
import time


def read_frame(stream) -> dict | None:
    head = stream.read(8)
    if len(head) < 8:
        return None
    (size,) = struct.unpack(">Q", head)
    return json.loads(stream.read(size))


def write_frame(stream, message: dict) -> None:
    data = json.dumps(message).encode()
    stream.write(struct.pack(">Q", len(data)) + data)
    stream.flush()


def become_subreaper() -> None:
    """Make this process the one that inherits every orphan of its descendants (Linux's PR_SET_CHILD_SUBREAPER), so
    that a process an answer starts and abandons, even in a session of its own, stays one of its descendants."""
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def descendants() -> list:
    """The PIDs of every process below this one."""
    children = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(p))
    found, todo = [], [os.getpid()]
    while todo:
        for c in children.get(todo.pop(), []):
            found.append(c)
            todo.append(c)
    return found


def end_the_others() -> None:
    """SIGKILL every process below this one (all an answer started: this process is their subreaper), and reap them.
    Only descendants: with the sandbox off, the machine's other processes are not this process's to end."""
    for _ in range(20):  # a process can fork while the others are being ended
        found = descendants()
        for p in found:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG) == (0, 0):
                    break
            except ChildProcessError:
                break
        if not found:
            return
        time.sleep(0.02)


def forked(work, timeout: float) -> dict:
    """`work()`'s reply (a JSON-able dict), computed in a child process that has at most `timeout` seconds; every
    process the child leaves is ended before this returns."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        status = 1
        try:
            os.close(read_end)
            try:
                reply = work()
            except (
                BaseException
            ) as err:  # the answer's error is a result too: the grader reports it
                reply = {"error": f"{type(err).__name__}: {err}"[:300]}
            view = memoryview(json.dumps(reply).encode())
            while view:
                view = view[os.write(write_end, view) :]
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    chunks, deadline, timed_out = [], time.monotonic() + timeout, False
    while True:
        ready, _, _ = select.select(
            [read_end], [], [], max(deadline - time.monotonic(), 0)
        )
        if not ready:
            timed_out = True
            break
        chunk = os.read(read_end, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    end_the_others()
    if timed_out:
        return {"error": "timed out"}
    try:
        return json.loads(b"".join(chunks))
    except ValueError:
        return {"error": "the answer's process ended without a result"}


def one_run(namespace: dict, source: str) -> dict:
    """In a grandchild: run `source` after the context, and pack what its driver handed to `_result`."""
    import numpy as np

    results = []
    namespace["_result"] = results.append
    exec(compile(source, "<job>", "exec"), namespace)
    if len(results) != 1:
        raise RuntimeError(f"the driver gave {len(results)} results, not 1")
    buffer = io.BytesIO()
    np.savez(buffer, **{str(k): np.asarray(v) for k, v in results[0].items()})
    return {"npz": base64.b64encode(buffer.getvalue()).decode()}


def context_then_runs(job: dict) -> dict:
    """In the child: silence its output, run the job's context once, then each of its runs in a grandchild of its own
    (forked from the context: what one run changes, the next does not see)."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    sys.stdout = sys.stderr = open(os.devnull, "w")
    become_subreaper()  # not inherited across fork
    cases = {}
    if job.get("cases"):
        import numpy as np

        with np.load(
            io.BytesIO(base64.b64decode(job["cases"])), allow_pickle=False
        ) as f:
            cases = {k: f[k] for k in f.files}
    import types

    main = types.ModuleType(
        "__main__"
    )  # the job's namespace is __main__, as a notebook's is
    sys.modules["__main__"] = main
    namespace = main.__dict__
    namespace["_CASES"] = cases
    exec(compile(job.get("context", ""), "<job>", "exec"), namespace)
    timeout = float(job.get("timeout", 60))
    return {
        "results": [
            forked(lambda s=s: one_run(namespace, s), timeout) for s in job["runs"]
        ]
    }


def run(job: dict) -> dict:
    """The job's context in a child, each of its runs in a grandchild; the whole within its time."""
    runs = len(job["runs"])
    total = float(job.get("context_timeout", 120)) + runs * float(
        job.get("timeout", 60)
    )
    return forked(lambda: context_then_runs(job), total)


def main() -> None:
    import numpy  # noqa: F401  (once, before any fork)
    import torch
    import torch._dynamo  # noqa: F401  (imported on first use, it replaces torch.manual_seed: before any watch)

    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    become_subreaper()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    write_frame(stdout, {"ready": True})
    while (job := read_frame(stdin)) is not None:
        reply = run(job)
        write_frame(stdout, {"job": job["job"], "nonce": job["nonce"], **reply})


if __name__ == "__main__":
    main()
