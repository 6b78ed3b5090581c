"""The process that runs answers (booktools/grading/zygote.py, driven by booktools/grading/worker.py): each job in a
child of its own, with nothing in its namespace but what the job brings, arrays back and nothing else."""

import os

import numpy as np
import pytest

from booktools.grading.sandbox import bwrap_problem, runs_folder, sandbox_command
from booktools.grading.worker import Tampered, Worker, WorkerError
from conftest import ROOT, unavailable

DOUBLE = """
import torch
def double(x):
    return 2 * x
_result({"y": double(torch.from_numpy(_CASES["x"])).numpy()})
"""


@pytest.fixture
def worker(tmp_path):
    with Worker(tmp_path) as w:
        yield w


def test_a_job_returns_the_arrays_its_driver_hands_over(worker):
    x = np.arange(6.0).reshape(2, 3)
    assert np.array_equal(worker.run(DOUBLE, {"x": x})["y"], 2 * x)


def test_each_job_starts_from_an_empty_namespace(worker):
    worker.run("SECRET_HELPER = lambda x: x\n_result({})")
    with pytest.raises(WorkerError, match="NameError"):
        worker.run("_result({'y': SECRET_HELPER(1)})")


def test_the_answer_s_error_and_a_timeout_are_results_and_the_worker_goes_on(worker):
    with pytest.raises(WorkerError, match="ZeroDivisionError"):
        worker.run("_result({'y': 1 / 0})")
    with pytest.raises(WorkerError, match="timed out"):
        worker.run("while True:\n    pass", timeout=1)
    assert worker.run("_result({'y': 3})")["y"] == 3


def test_a_process_an_answer_leaves_running_is_ended_before_the_next_job(worker):
    """Even one in a session of its own whose parent has exited: the zygote is every orphan's subreaper."""
    spawn = """
import os, subprocess, sys
if os.fork() == 0:  # a grandchild that leaves, and the sleeper it starts is an orphan
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    os._exit(0)
os.wait()
_result({})
"""
    worker.run(spawn)
    alive = """
import os
found = []
for p in os.listdir("/proc"):
    try:
        found += [p] if "time.sleep(60)" in open(f"/proc/{p}/cmdline").read().replace("\\0", " ") else []
    except OSError:
        pass
_result({"sleepers": len(found)})
"""
    assert worker.run(alive)["sleepers"] == 0


def test_a_reply_forged_on_the_worker_s_channel_voids_the_grading(worker):
    """An answer that writes a frame to the zygote's stdout (through /proc) cannot pass it off as a later job's
    result: the later job's nonce did not exist yet."""
    forge = """
import json, os, struct
def parent(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])
zygote, pid = None, os.getpid()
while pid > 1:  # the highest of its ancestors that runs zygote.py: the zygote itself, whose stdout is the channel
    pid = parent(pid)
    if pid > 1 and "zygote.py" in open(f"/proc/{pid}/cmdline").read():
        zygote = pid
frame = json.dumps({"job": 2, "nonce": "guess", "npz": ""}).encode()
with open(f"/proc/{zygote}/fd/1", "wb") as channel:
    channel.write(struct.pack(">Q", len(frame)) + frame)
_result({})
"""
    try:
        worker.run(forge)
    except Tampered:
        pass
    with pytest.raises(Tampered):
        worker.run("_result({'y': 1})")


def test_in_the_sandbox_the_answer_sees_neither_the_book_nor_the_grader(tmp_path):
    if why := bwrap_problem():
        unavailable(f"no bubblewrap sandbox here: {why}")
    folder = runs_folder() / tmp_path.name
    folder.mkdir()
    probe = f"""
import os, importlib.util
_result({{"book": os.path.exists({str(ROOT / "booktools")!r}), "grader": importlib.util.find_spec("booktools") is not None,
          "processes": len([p for p in os.listdir("/proc") if p.isdigit()])}})
"""
    try:
        with Worker(folder, sandbox_command()) as w:
            seen = w.run(probe, timeout=60)
            assert np.array_equal(w.run(DOUBLE, {"x": np.ones(3)})["y"], 2 * np.ones(3))
    finally:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    assert not seen["book"] and not seen["grader"], seen
    assert seen["processes"] <= 6, seen  # the sandbox's own: no process of the grader's
    assert os.path.exists(ROOT / "booktools")
