"""The process that runs answers, inside the grading sandbox: a plain script (it imports nothing of the book's, which
the sandbox does not show), started by booktools/grading/worker.py as `python -I zygote.py`.

It imports torch and numpy once, then for each job the grader sends on its stdin it forks a child that runs the job's
code in a namespace of its own (an exercise's context, the answer, and the driver that calls the answer on the cases
the grader drew) and hands back only arrays: the driver's `_result({...})`, saved as an npz without pickles. The
child's stdout and stderr go nowhere the grader reads; its result comes back over a pipe of its own.

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


def child(source: str, cases: dict, pipe: int) -> None:
    """Run a job's code in the child, and write its result (or its error) to `pipe`; never return."""
    import numpy as np

    status = 1
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        sys.stdout = sys.stderr = open(os.devnull, "w")
        results = []
        namespace = {"__name__": "__main__", "_CASES": cases, "_result": results.append}
        try:
            exec(compile(source, "<job>", "exec"), namespace)
            if len(results) != 1:
                raise RuntimeError(f"the driver gave {len(results)} results, not 1")
            buffer = io.BytesIO()
            np.savez(buffer, **{str(k): np.asarray(v) for k, v in results[0].items()})
            reply = {"npz": base64.b64encode(buffer.getvalue()).decode()}
        except (
            BaseException
        ) as err:  # the answer's error is a result too: the grader reports it
            reply = {"error": f"{type(err).__name__}: {err}"[:300]}
        data = json.dumps(reply).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(pipe, view) :]
        status = 0
    finally:
        os._exit(status)


def run(job: dict) -> dict:
    """Fork a child for `job` and wait for its result, at most job['timeout'] seconds."""
    cases = {}
    if job.get("cases"):
        import numpy as np

        with np.load(
            io.BytesIO(base64.b64decode(job["cases"])), allow_pickle=False
        ) as f:
            cases = {k: f[k] for k in f.files}
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        child(job["source"], cases, write_end)
    os.close(write_end)
    chunks, deadline = [], time.monotonic() + float(job.get("timeout", 60))
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([read_end], [], [], max(left, 0))
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


def main() -> None:
    import numpy  # noqa: F401  (once, before any fork)
    import torch

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
