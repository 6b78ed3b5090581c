"""A Sphinx extension (loaded from _config.yml): each page loads each of its scripts once.

Sphinx 7.4.7 lists twice every inline script that an extension adds once the builder has started: once as
`app.add_js_file(None, body=...)` hands it to the builder (filename None) and once more when the builder, about to
write, adds the registry's scripts again (filename ''). The two copies do not compare equal, so both reach the page.
sphinx-thebe adds its configuration that way (`const THEBE_JS_URL = ...`), and the second copy threw "Identifier
'THEBE_JS_URL' has already been declared" on every page; sphinx-togglebutton's `var togglebuttonSelector` was doubled
too, silently. This drops each repeated script from the page's list, keeping the first.
"""


def script_key(script) -> tuple:
    """What makes two entries of a page's script list the same script: its file and its attributes (inline code is
    the attribute `body`), with None and '' both meaning "no file"."""
    attributes = getattr(script, "attributes", {})
    return (
        str(getattr(script, "filename", script) or ""),
        tuple(sorted((key, str(value)) for key, value in attributes.items())),
    )


def drop_repeated_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for script in scripts:
        if (key := script_key(script)) not in seen:
            seen.add(key)
            kept.append(script)
    # the builder restores its own list before the next page, so this changes this page only
    scripts[:] = kept


def setup(app):
    # after the themes and extensions that add scripts to a page (default priority 500)
    app.connect("html-page-context", drop_repeated_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
