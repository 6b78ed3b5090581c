"""A Sphinx extension (loaded from _config.yml): every page's download menu offers the whole book as one PDF,
residual-connections.pdf at the site's root, which `make pdf` prints from the built site (booktools/build/pdf.py)
and publishes there, adding this entry to pages built before it. A build without the PDF does not offer it, so no
page links a file the build did not make. The theme's own ".pdf" entry stays: it prints the page at hand."""

from pathlib import Path

BOOK_PDF = "residual-connections.pdf"


def add_book_pdf(buttons: list, url: str) -> None:
    for button in buttons:
        if button.get("label") == "download-buttons":
            button["buttons"].append(
                {
                    "type": "link",
                    "url": url,
                    "text": "whole book (.pdf)",
                    "tooltip": "Download the whole book as one PDF",
                    "icon": "fas fa-book",
                    "label": "download-book-pdf-button",
                }
            )


def on_page(app, pagename, templatename, context, doctree):
    if "pathto" in context and (Path(app.outdir) / BOOK_PDF).exists():
        add_book_pdf(context.get("header_buttons", []), context["pathto"](BOOK_PDF, 1))


def setup(app):
    # after the theme's buttons (priority 501)
    app.connect("html-page-context", on_page, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
