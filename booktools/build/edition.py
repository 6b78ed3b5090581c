"""`make edition TAG=v2026.12`: tag an edition of the book that a course can pin.

The tag gets a commit of its own, made on top of the current commit without moving the branch: in it,
`repository.branch` in _config.yml is the tag, and the Colab badges, the Colab copies and the student versions
are written again (`make badges`, `make student`), so that every Colab and student-version link of that edition
opens the edition's files, not whatever main holds later. The branch you are on is left as it was. Push the tag
(`git push origin TAG`): CI builds and tests it, and keeps its site and PDF as the run's artifacts.
Usage: python -m booktools.build.edition TAG
"""

import re
import subprocess
import sys

from booktools.settings import ROOT

CONFIG = ROOT / "_config.yml"
# the one line that says which branch or tag the Colab links open
BRANCH = re.compile(r"^(?P<indent>[ \t]+)branch:[ \t]*\S+[ \t]*$", re.M)
TAG = re.compile(r"^v\d{4}\.\d{1,2}(\.\d+)?$")


def pin_branch(config: str, tag: str) -> str:
    """_config.yml's text with `repository.branch` set to the tag."""
    if len(BRANCH.findall(config)) != 1:
        raise SystemExit(
            "_config.yml must have exactly one `branch:` line (under repository:)."
        )
    return BRANCH.sub(lambda m: f"{m['indent']}branch: {tag}", config)


def git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()


def main() -> int:
    if len(sys.argv) != 2 or not TAG.match(sys.argv[1]):
        raise SystemExit(
            "Name the edition by year and month: make edition TAG=v2026.12 (or v2026.12.1 for a fix)."
        )
    tag = sys.argv[1]
    if git("status", "--porcelain"):
        raise SystemExit(
            "Commit or stash your changes first: an edition is made from a clean tree."
        )
    if tag in git("tag", "--list", tag).split():
        raise SystemExit(f"The tag {tag} exists already.")
    start = git("rev-parse", "HEAD")
    branch = git("rev-parse", "--abbrev-ref", "HEAD")
    git("checkout", "--quiet", "--detach")
    try:
        CONFIG.write_text(pin_branch(CONFIG.read_text(), tag))
        python = sys.executable
        for tool in ("booktools.build.badges", "booktools.build.student"):
            subprocess.run([python, "-m", tool], cwd=ROOT, check=True)
        git("add", "--all")
        git(
            "commit",
            "--quiet",
            "-m",
            f"Edition {tag}: its Colab and student links open {tag}",
        )
        git("tag", "-a", tag, "-m", f"Residual Connections, edition {tag}")
    finally:
        git("checkout", "--quiet", "--force", branch if branch != "HEAD" else start)
    print(
        f"Tagged {tag} ({git('rev-parse', '--short', tag)}, on top of {start[:7]}). Push it: git push origin {tag}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
