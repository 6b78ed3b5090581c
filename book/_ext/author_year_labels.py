"""A Sphinx extension (loaded from _config.yml): bibliography labels that read like the in-text citations.

The book cites author-year ("He et al., 2016a"); pybtex's default labels would be "[HZRS16a]". This registers a
pybtex formatting style, `author_year`, sorted by author, year and title, whose label for each entry is what the
text shows: "Krizhevsky, 2009", "Ioffe and Szegedy, 2015", "He et al., 2016a". Two entries whose labels would be
the same take a, b, ... after the year, in the order of their titles, so that the text tells them apart too; the
`year` field in references.bib stays a number.
"""

from pybtex.plugin import register_plugin
from pybtex.richtext import Text
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle


def surname(person) -> str:
    return Text.from_latex(
        " ".join(person.prelast_names + person.last_names)
    ).render_as("text")


def author_year(entry) -> str:
    people = [surname(p) for p in entry.persons.get("author", [])]
    names = (
        people[0]
        if len(people) == 1
        else " and ".join(people)
        if len(people) == 2
        else f"{people[0]} et al."
    )
    return f"{names}, {entry.fields['year']}"


def author_year_labels(entries) -> dict:
    """{key: label} for every entry, with a, b, ... after the year where two entries share a label."""
    groups = {}
    for key, entry in entries.items():
        groups.setdefault(author_year(entry), []).append(key)
    labels = {}
    for label, keys in groups.items():
        if len(keys) == 1:
            labels[keys[0]] = label
            continue
        keys.sort(key=lambda k: str(entries[k].fields["title"]).strip("{}").lower())
        for letter, key in zip("abcdefghijklmnopqrstuvwxyz", keys):
            labels[key] = label + letter
    return labels


class AuthorYearLabels(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        sorted_entries = list(sorted_entries)
        labels = author_year_labels({entry.key: entry for entry in sorted_entries})
        for entry in sorted_entries:
            yield labels[entry.key]


class AuthorYearStyle(UnsrtStyle):
    default_label_style = "author_year"
    default_sorting_style = "author_year_title"


register_plugin("pybtex.style.labels", "author_year", AuthorYearLabels)
register_plugin("pybtex.style.formatting", "author_year", AuthorYearStyle)


def setup(app):
    return {"parallel_read_safe": True, "parallel_write_safe": True}
