"""A Sphinx extension (loaded from _config.yml): figures are numbered per page, 1, 2, 3, ...

A chapter's figures carry a caption and a name in their cell's metadata (`mystnb.figure`), and the text refers
to them with {numref}. Sphinx numbers figures per section number, and the book's table of contents is not
numbered, so by default the count would run on across the whole book: the first figure of chapter 02 would be
"Figure 4". A chapter is read on its own, in the book and as a Colab copy (booktools/build/colab.py numbers the
figures the same way), so here each page's figures are renumbered from 1, in the order Sphinx found them.
"""


def number_per_page(app, env) -> list:
    for fignumbers in env.toc_fignumbers.values():
        figures = fignumbers.get("figure", {})
        for k, name in enumerate(sorted(figures, key=figures.get), start=1):
            figures[name] = (k,)
    return []


def setup(app):
    # priority 900: after Sphinx's own TocTreeCollector has assigned the book-wide numbers (priority 500)
    app.connect("env-get-updated", number_per_page, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
