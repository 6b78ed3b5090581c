"""The grader's side of the process that runs answers (zygote.py): start it in the sandbox, send it jobs, read back
arrays. Nothing it returns is code or a pickle: a job's result is the npz of the arrays the driver handed over, or
the error that stopped it.

    with Worker(folder, prefix) as worker:
        arrays = worker.run(source, cases={"x": x}, timeout=30)   # or a WorkerError

A job's `source` is the code that runs in a fresh child process: the exercise's context, the answer, and a driver
that reads `_CASES` (the arrays sent) and ends with `_result({...})`.
"""

import base64
import io
import json
import secrets
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np

from booktools.grading.sandbox import FOLDER, kernel_environment

ZYGOTE = Path(__file__).with_name("zygote.py")
# this venv's Python, by the path the sandbox shows it at (it binds the venv's real folder)
PYTHON = str(Path(sys.prefix).resolve() / "bin" / "python")


class WorkerError(Exception):
    """A job that gave no arrays: the answer raised, timed out, or the channel was tampered with."""


class Tampered(WorkerError):
    """The channel carried something the zygote did not send for this job: every later result is void."""


def _pack(arrays: dict) -> str:
    buffer = io.BytesIO()
    np.savez(buffer, **{k: np.asarray(v) for k, v in arrays.items()})
    return base64.b64encode(buffer.getvalue()).decode()


def _unpack(text: str) -> dict:
    with np.load(io.BytesIO(base64.b64decode(text)), allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


class Worker:
    """A zygote in `folder` (its own: its home and working folder), started under `prefix` (the sandbox's command,
    FOLDER standing for the folder; [] for none)."""

    def __init__(self, folder: Path, prefix: list = ()):
        self.folder = Path(folder)
        home = self.folder / "home"
        home.mkdir(exist_ok=True)
        shutil.copyfile(ZYGOTE, self.folder / "zygote.py")
        command = [str(self.folder) if p == FOLDER else p for p in prefix]
        self.process = subprocess.Popen(
            [*command, PYTHON, "-I", str(self.folder / "zygote.py")],
            cwd=self.folder,
            env=kernel_environment(home),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.jobs = 0
        self.broken = None
        if self._read() != {"ready": True}:
            raise WorkerError("the worker did not start")

    def _read(self) -> dict:
        head = self.process.stdout.read(8)
        if len(head) < 8:
            raise WorkerError("the worker ended")
        (size,) = struct.unpack(">Q", head)
        if size > 1 << 30:
            raise Tampered("a frame of impossible size")
        data = self.process.stdout.read(size)
        try:
            return json.loads(data)
        except ValueError:
            raise Tampered("a frame that is not JSON") from None

    def run_batch(
        self,
        context: str,
        runs: list,
        cases: dict | None = None,
        timeout: float = 60,
        context_timeout: float = 120,
    ) -> list:
        """For each source in `runs`, run after `context` (which runs once) in a process of its own: the arrays its
        driver handed to `_result`, or a WorkerError saying why there are none. Tampered if the channel carried
        anything the worker did not write for this job."""
        if self.broken:
            raise Tampered(self.broken)
        self.jobs += 1
        nonce = secrets.token_hex(16)  # drawn now: no earlier job's process can know it
        job = {"job": self.jobs, "nonce": nonce, "context": context, "runs": list(runs)}
        job |= {"timeout": timeout, "context_timeout": context_timeout}
        if cases:
            job["cases"] = _pack(cases)
        data = json.dumps(job).encode()
        try:
            self.process.stdin.write(struct.pack(">Q", len(data)) + data)
            self.process.stdin.flush()
            reply = self._read()
        except (BrokenPipeError, WorkerError) as err:
            self.broken = f"the worker stopped: {err}"
            raise WorkerError(self.broken) from None
        if reply.get("job") != self.jobs or reply.get("nonce") != nonce:
            self.broken = "a reply that the worker did not write for this job (an answer wrote to its channel)"
            raise Tampered(self.broken)
        if "error" in reply:  # the context failed, or the whole job ran out of time
            return [
                WorkerError(f"the exercise's context: {reply['error']}") for _ in runs
            ]
        results = reply.get("results")
        if not isinstance(results, list) or len(results) != len(runs):
            return [WorkerError("an unreadable result") for _ in runs]
        return [self._arrays(r) for r in results]

    @staticmethod
    def _arrays(result) -> dict | WorkerError:
        if not isinstance(result, dict) or "error" in result:
            return WorkerError(
                str(result.get("error") if isinstance(result, dict) else "no result")
            )
        try:
            return _unpack(result["npz"])
        except Exception as err:
            return WorkerError(f"an unreadable result: {type(err).__name__}")

    def run(self, source: str, cases: dict | None = None, timeout: float = 60) -> dict:
        """The arrays one source's driver handed to `_result`; WorkerError if none."""
        (result,) = self.run_batch("", [source], cases, timeout)
        if isinstance(result, WorkerError):
            raise result
        return result

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
