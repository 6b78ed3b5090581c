"""A Sphinx extension (loaded from _config.yml): the theme's "Open issue" button becomes "Report an error on this
page". It opens the erratum form (.github/ISSUE_TEMPLATE/erratum.yml) with the page's address filled in, instead
of a blank issue whose title the theme writes.
"""

from urllib.parse import urlencode

FORM = "erratum.yml"


def erratum_url(repository: str, page_url: str) -> str:
    query = urlencode({"template": FORM, "title": "Erratum: ", "page": page_url})
    return f"{repository.rstrip('/')}/issues/new?{query}"


def report_errors(buttons: list, repository: str, page_url: str) -> None:
    for button in buttons:
        if button.get("label") == "source-issues-button":
            button.update(
                url=erratum_url(repository, page_url),
                text="Report an error on this page",
                tooltip="Report an error on this page",
            )
        report_errors(button.get("buttons", []), repository, page_url)


def on_page(app, pagename, templatename, context, doctree):
    base = app.config.html_baseurl.rstrip("/") + "/"
    repository = app.config.html_theme_options.get("repository_url", "")
    report_errors(
        context.get("header_buttons", []), repository, f"{base}{pagename}.html"
    )


def setup(app):
    # after the theme's buttons (priority 501)
    app.connect("html-page-context", on_page, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
