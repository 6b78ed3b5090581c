"""A Sphinx extension (loaded from _config.yml): a chapter page's Colab button and its .ipynb download open the
chapter's CommonMark copy, notebooks/colab/NN_topic.ipynb (booktools/build/colab.py), instead of the MyST source,
whose {cite} roles and admonition fences Colab and GitHub would show raw.
"""

import re
import shutil
from pathlib import Path

CHAPTER_ON_GITHUB = re.compile(r"(/blob/[^/]+/notebooks/)(?=\d\d_[^/]+\.ipynb$)")


def point_at_copies(buttons: list) -> None:
    for button in buttons:
        if "url" in button:
            button["url"] = CHAPTER_ON_GITHUB.sub(r"\1colab/", button["url"])
        point_at_copies(button.get("buttons", []))


def on_page(app, pagename, templatename, context, doctree):
    point_at_copies(context.get("header_buttons", []))


def on_finished(app, exception):
    """Put each chapter's copy where the page's download button points: _sources/notebooks/NN_topic.ipynb."""
    if exception is not None or app.builder.format != "html":
        return
    copies = Path(app.srcdir) / "notebooks" / "colab"
    for downloadable in (Path(app.outdir) / "_sources" / "notebooks").glob(
        "[0-9][0-9]_*.ipynb"
    ):
        copy = copies / downloadable.name
        if not copy.exists():
            raise FileNotFoundError(
                f"{copy} is missing: run `make student`, which writes the Colab copies"
            )
        shutil.copyfile(copy, downloadable)


def setup(app):
    # after the theme's buttons (priority 501)
    app.connect("html-page-context", on_page, priority=600)
    app.connect("build-finished", on_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
