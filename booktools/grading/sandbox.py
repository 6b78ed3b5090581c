"""The sandbox each graded kernel runs in, made with util-linux's `unshare` and `prlimit`, and the kernel's run.

A user and network namespace of its own, so the kernel has no network, not even the grader's loopback (kernel and
grader talk over Unix sockets instead of TCP); a mount namespace in which everything is read-only but its own folder,
and the book, the submissions, the reference notebook's folder, the temporary folder (with the other kernels'
folders, and so their sockets) and the home are empty (HIDE_OTHERS); a PID namespace; a throwaway home and working
folder; an environment without the instructor's variables (KERNEL_ENVIRONMENT: no SECRET, no MAKEFLAGS); limits on
address space, CPU time and processes (GRADE_CPU_SECONDS, GRADE_PROCESSES). It can still read the other files the instructor's user can: run the grader on a machine or in
a container that holds nothing else of value. Where user namespaces are blocked (many containers), grading stops
with a message that says what to do (NO_SANDBOX_HELP), and `--no-sandbox` grades without it.

Where bubblewrap is installed (`apt-get install bubblewrap`) it makes the sandbox instead, and the kernel sees only the
system, its Python and its own folder (`bwrap_command`). `python -m booktools.grading.sandbox` says whether this
machine can make the sandbox, and which.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

from booktools.execute import run_notebook
from booktools.settings import GRADE_MEMORY_GB

# What one sandboxed kernel may use beside its memory: CPU seconds (RLIMIT_CPU, for each of its processes: the
# wall-clock limits per cell stop a loop, this stops a process that spins in the background while other cells run)
# and processes and threads (RLIMIT_NPROC, set inside the kernel's own user namespace, where it counts only the
# kernel's own: not the instructor's other processes, as a limit set outside it would; the kernel of the book's
# chapters runs about 20). The kernel's PID namespace ends every process it started when it exits. A user that is
# root outside the sandbox (a container) is exempt from RLIMIT_NPROC: there only the PID namespace and the time
# limits hold.
GRADE_CPU_SECONDS = 1800
GRADE_PROCESSES = 128

# A user namespace (to be allowed the rest, as an unprivileged user) with a network namespace (no interface but a
# loopback of its own, which is down) and a mount namespace (HIDE_OTHERS).
NAMESPACES = ["unshare", "--user", "--net", "--map-root-user", "--mount", "--"]


# In the kernel's mount namespace (`sandbox_command()` passes: the kernel's folder, the folders to keep, --, the
# folders to empty, --, then the kernel's command):
# - every mount is read-only, but the kernel's own folder (its home and TMPDIR are in it): an answer cannot change
#   the venv (a .pth file there would run in the grader), the book, or an earlier run's grades;
# - the folders to empty (`hidden_folders`: the book, with the instructor notebooks' solutions; the submissions; the
#   reference's folder; the temporary folder, with every run's folder, so the other kernels' sockets, through which
#   what they print could be read; the grader's home) are replaced by empty ones, and the kernel's own folder and
#   the folders to keep (the venv and the Python it is made from) are put back where they lie inside one.
# The mounts are made in an outer namespace and the kernel runs in an inner one, where they are locked: it cannot
# unmount them or make them writable. The inner one also has a PID namespace of its own, so the kernel can see and
# signal only its own processes, not the grader's or the other kernels' (which run as the same user);
# --kill-child ends it, and all it started, with the process the grader started.
HIDE_OTHERS = r"""
W="$1"; shift
mount -t tmpfs tmpfs /mnt && mkdir /mnt/own && mount --bind "$W" /mnt/own || exit 1
i=0
while [ "$1" != -- ]; do
  i=$((i + 1)); mkdir /mnt/$i && mount --bind "$1" /mnt/$i && printf '%s' "$1" > /mnt/$i.path || exit 1; shift
done; shift
for m in $(awk '{print $5}' /proc/self/mountinfo); do
  case "$m" in /mnt|/mnt/*|/proc|/proc/*|/sys|/sys/*|/dev/pts) continue ;; esac
  mount -o remount,bind,ro "$m" || exit 1
done
while [ "$1" != -- ]; do mount -t tmpfs tmpfs "$1" || exit 1; shift; done; shift
mkdir -p "$W" && mount --bind /mnt/own "$W" || exit 1
while [ $i -gt 0 ]; do
  k=$(cat /mnt/$i.path); mkdir -p "$k" 2>/dev/null
  mount --bind /mnt/$i "$k" && mount -o remount,bind,ro "$k" || exit 1; i=$((i - 1))
done
umount -l /mnt
exec unshare --user --map-root-user --mount --pid --fork --kill-child --mount-proc -- "$@"
"""


FOLDER = "{folder}"  # in `sandbox_command()`'s command: the kernel's own folder


def runs_folder() -> Path:
    """The folder that holds every graded run's folder (the reference's too), and nothing else: what HIDE_OTHERS
    hides from each sandboxed kernel, so it must not hold the venv or the book."""
    folder = Path(tempfile.gettempdir()) / f"rc-grading-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


NO_SANDBOX_HELP = """\
make grade runs each submission in a sandbox: no network, a throwaway home and working folder, and limits on
memory, CPU time and processes, made with bubblewrap where it is installed and with `unshare` where it is not.
Both need user namespaces, and this system does not allow them:
  {why}
Inside a container this is common: Docker's default seccomp profile blocks user namespaces, and some
hosts switch them off (on Debian, `sysctl kernel.unprivileged_userns_clone`). Either allow them, or grade
inside a throwaway container that has no network, with the sandbox off:
  docker run --rm -v "$PWD":/book -w /book python:3.11 make venv          # once, with network
  docker run --rm --network none --memory 8g -v "$PWD":/book -w /book python:3.11 \\
    make grade SUBMISSIONS=folder CHAPTER=NN_topic SANDBOX=0"""


def sandbox_problem(command: list = NAMESPACES) -> str | None:
    """None if this system lets an unprivileged user make the sandbox's namespaces, else what went wrong."""
    try:
        run = subprocess.run(
            [*command, "true"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"{type(err).__name__}: {err}"
    return (
        None
        if run.returncode == 0
        else (run.stderr.strip() or f"exit {run.returncode}")
    )


# Where bubblewrap (Debian's `bubblewrap`) is installed and works, the kernel sees nothing but the system (read-only),
# the Python and venv it runs on (read-only), and its own folder: a new root holding those alone, a private /tmp, no
# network, no home, its own PID, IPC and UTS namespaces, every capability dropped. The book, the submissions, earlier
# grades and every other file of the instructor's are not hidden one by one: they are not there. Where it is not
# installed, `unshare` makes the sandbox above, which hides the folders it is told of (HIDE_OTHERS).
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")


def bwrap_command() -> list | None:
    """bubblewrap's part of the sandbox's command (FOLDER: the kernel's own folder), or None where it is missing."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None
    # JPY_PARENT_PID: under bwrap's own PID 1 the kernel's parent is always PID 1, which ipykernel takes for its
    # parent having died; --die-with-parent does that watch instead
    command = [bwrap, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL"]
    command += ["--unsetenv", "JPY_PARENT_PID"]
    for top in SYSTEM:
        if os.path.islink(top):  # merged /usr: /bin -> usr/bin
            command += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            command += ["--ro-bind", top, top]
    command += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for keep in sorted({Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}):
        command += ["--ro-bind", str(keep), str(keep)]
    # SIGINT (how a cell that runs over is interrupted) goes to the kernel's whole process group: bwrap must ignore it,
    # or it ends and takes the kernel with it; ipykernel sets its own handler for each cell it runs
    ignore_interrupts = ["sh", "-c", 'trap "" INT; exec "$@"', "sandbox"]
    return [
        *ignore_interrupts,
        *command,
        *["--bind", FOLDER, FOLDER, "--chdir", FOLDER, "--"],
    ]


def sandbox_command(
    memory_gb: float = GRADE_MEMORY_GB,
    hide: tuple = (),
    cpu_seconds: int = GRADE_CPU_SECONDS,
    processes: int = GRADE_PROCESSES,
    bubblewrap: bool | None = None,
) -> list:
    """The command that a sandboxed kernel's command line is run under (FOLDER becomes the kernel's folder), with
    `memory_gb` of address space, `cpu_seconds` of CPU time per process and `processes` processes and threads, counted
    in the kernel's own user namespace: bubblewrap's (`bwrap_command`) where `bubblewrap` (default: where bwrap is
    installed and makes its sandbox here), else a read-only system in which the folders in `hide` and the temporary
    folder are empty (HIDE_OTHERS)."""
    limits = [
        "prlimit",
        f"--as={int(memory_gb * 2**30)}",
        f"--cpu={int(cpu_seconds)}",
        f"--nproc={int(processes)}",
        "--",
    ]
    if bubblewrap is None:
        bubblewrap = bwrap_problem() is None
    if bubblewrap:
        return [*bwrap_command(), *limits]
    keep = sorted({Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()})
    return [
        *NAMESPACES,
        "sh",
        "-c",
        HIDE_OTHERS,
        "sandbox",
        FOLDER,
        *map(str, keep),
        "--",
        *map(str, hidden_folders([*hide, tempfile.gettempdir(), Path.home()])),
        "--",
        *limits,
    ]


def bwrap_problem() -> str | None:
    """None if bubblewrap is installed and makes its sandbox here, else why not."""
    command = bwrap_command()
    if command is None:
        return "bwrap is not installed (Debian: apt-get install bubblewrap)"
    with tempfile.TemporaryDirectory(dir=runs_folder()) as probe:
        return sandbox_problem([probe if part == FOLDER else part for part in command])


def hidden_folders(folders) -> list:
    """The folders to empty in the sandbox: each of `folders` that is a folder, is not the root, and is not inside
    another one (the kernel's own folder and the venv are put back)."""
    found = {Path(f).resolve() for f in folders}
    found = sorted(f for f in found if f.is_dir() and f != Path("/"))
    return [f for f in found if not any(g in f.parents for g in found)]


def execute(nb, timeout, workdir: Path, prefix: list) -> list:
    """Run `nb` in place, in `workdir` with a home of its own there and its sockets there too, under `prefix` (the
    sandbox's command with FOLDER in it, or [] for none); notes on a kernel that died or never started. `timeout`:
    the seconds each cell may run, a number or a function of the cell (grade.cell_limits). A cell that runs over is
    interrupted, its error left as an output, and the run goes on."""
    home = workdir / "home"
    home.mkdir()
    try:
        run_notebook(
            nb,
            workdir,
            timeout=timeout,
            allow_errors=True,
            interrupt_on_timeout=True,
            env=kernel_environment(home),
            prefix=[str(workdir) if part == FOLDER else part for part in prefix],
            sockets=workdir,
        )
    except Exception as err:  # the kernel died, or could not start
        why = (
            str(err)[:120]
            or "the kernel died or stopped answering (out of memory?); grade this submission again alone"
        )
        return [f"execution stopped: {type(err).__name__}: {why}"]
    return []


KERNEL_CHECK = "print('the kernel runs', 6 * 7)"


def kernel_problem(prefix: list, folder: Path, timeout: int = 120) -> str | None:
    """None if a kernel starts under `prefix` (the whole sandbox, or [] for none) and runs a cell, else what went
    wrong: probing the sandbox with `true` says nothing of whether Python, the venv and the kernel's sockets work
    inside it."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(KERNEL_CHECK)])
    with tempfile.TemporaryDirectory(dir=folder) as workdir:
        notes = execute(nb, timeout, Path(workdir), prefix)
    printed = "".join(o.get("text", "") for o in nb.cells[0].get("outputs", []))
    if notes:
        return "; ".join(notes)
    return (
        None
        if "the kernel runs 42" in printed
        else f"the check cell printed {printed[:200]!r}"
    )


# What a kernel's environment keeps of the grader's: what programs need to run and the book's own settings. Not
# SECRET (the kernel gets only the number made from it), nor MAKEFLAGS (where `make grade SECRET=...` puts it too),
# nor anything else of the instructor's.
KERNEL_ENVIRONMENT = re.compile(
    r"PATH|LANG|TZ|LC_\w+|RC_\w+|MPLBACKEND|OMP_NUM_THREADS|MKL_NUM_THREADS|PYTHONHASHSEED|LD_LIBRARY_PATH"
)


def kernel_environment(home: Path) -> dict:
    """The environment a graded kernel starts with: KERNEL_ENVIRONMENT's variables, a home and a TMPDIR of its own."""
    (home / "tmp").mkdir(exist_ok=True)
    kept = {k: v for k, v in os.environ.items() if KERNEL_ENVIRONMENT.fullmatch(k)}
    return {**kept, "HOME": str(home), "TMPDIR": str(home / "tmp")}


def main() -> None:
    """Say whether this machine can make the sandbox, the whole of it, mounts and all."""
    if why := sandbox_problem():
        raise SystemExit(NO_SANDBOX_HELP.format(why=why))
    with tempfile.TemporaryDirectory(dir=runs_folder()) as probe:
        command = [probe if part == FOLDER else part for part in sandbox_command()]
        if why := sandbox_problem(command):
            raise SystemExit(NO_SANDBOX_HELP.format(why=why))
        if why := kernel_problem(sandbox_command(), runs_folder()):
            raise SystemExit(f"The sandbox is made, but no kernel starts in it: {why}")
    which = (
        "bubblewrap's: the kernel sees only the system, its Python and its own folder"
        if bwrap_problem() is None
        else f"unshare's, which hides the book, the submissions, /tmp and the home (no bubblewrap: {bwrap_problem()})"
    )
    print(
        f"This machine can make the grading sandbox ({which}), and a kernel runs in it: make grade runs each "
        "submission there."
    )


if __name__ == "__main__":
    main()
