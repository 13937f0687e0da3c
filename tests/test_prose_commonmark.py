"""Markdown prose as JupyterLab shows it: CommonMark with GitHub's extensions, where
Python-Markdown read it otherwise; MyST's constructs on the same parser; typography; depth
bounds; the registry other features plug into. Expected markup is what JupyterLab's
parser (marked, GFM) gives for the same text."""

from __future__ import annotations

import re
import pytest

from site_builder.site.prose import html as prose
from site_builder.site.prose.markdown.context import PageContext
from site_builder.site.prose.markdown.registry import Role, RoleCall, default_registry
from site_builder.site.prose.markdown.resolve import labels_of
from site_builder.source.syntax.markdown import MAX_DIRECTIVE_DEPTH, MAX_NESTING, markdown_parser
from tests.page_reader import visible


def render(text: str, page: PageContext | None = None, first_line: int = 0) -> str:
    return prose.render(text, "markdown", page=page, first_line=first_line)


def squeeze(html: str) -> str:
    return re.sub(r"\s*\n\s*", "", html.strip())


# ---------------------------------------------------------------- CommonMark and GitHub's extensions


def test_lists_nest_at_two_and_three_spaces_as_in_jupyter() -> None:
    two = squeeze(render("- a\n  - nested at two\n    - deeper\n- b"))
    assert two == ("<ul><li>a<ul><li>nested at two<ul><li>deeper</li></ul></li></ul></li><li>b</li></ul>")
    three = squeeze(render("1. first\n   * sub bullet\n   * another\n2. second"))
    assert three == ("<ol><li>first<ul><li>sub bullet</li><li>another</li></ul></li><li>second</li></ol>")
    # two spaces under "1. ": not enough to nest (CommonMark, marked): a list of its own, never literal text
    html = squeeze(render("1. one\n  * sub bullet\n2. two"))
    assert html == '<ol><li>one</li></ol><ul><li>sub bullet</li></ul><ol start="2"><li>two</li></ol>'
    assert "*" not in visible(html)
    # a list right after a paragraph line (Python-Markdown wanted a blank line first)
    assert squeeze(render("Steps:\n- one\n- two")) == "<p>Steps:</p><ul><li>one</li><li>two</li></ul>"


def test_tables_with_their_alignment() -> None:
    html = squeeze(render("| left | right | centre |\n|:-----|------:|:------:|\n| a | `b` | **c** |"))
    assert html == ('<table><thead><tr><th align="left">left</th><th align="right">right</th>'
                    '<th align="center">centre</th></tr></thead><tbody><tr><td align="left">a</td>'
                    '<td align="right"><code>b</code></td><td align="center"><strong>c</strong></td></tr></tbody></table>')


def test_strikethrough_autolinks_and_task_lists() -> None:
    html = render("~~struck~~ and ~single~, see https://example.org/a_b?x=1 or www.python.org.")
    assert "<s>struck</s>" in html and "<s>single</s>" in html
    assert '<a href="https://example.org/a_b?x=1" rel="noopener noreferrer">https://example.org/a_b?x=1</a>' in html
    assert '<a href="http://www.python.org" rel="noopener noreferrer">www.python.org</a>.' in html
    tasks = squeeze(render("- [x] done\n- [ ] to do"))
    assert tasks == ('<ul class="contains-task-list"><li class="task-list-item"><span class="task-box task-done" '
                     'title="done">☑</span> done</li><li class="task-list-item"><span class="task-box" '
                     'title="to do">☐</span> to do</li></ul>')


def test_code_in_prose_is_never_touched() -> None:
    html = render("Use `a -- b` and\n\n```python\nx = \"--\"  # https://not.a.link\n```",
                  PageContext(typography=True))
    assert "<code>a -- b</code>" in html and "https://not.a.link" in visible(html)
    assert "<a " not in html and "–" not in html


def test_raw_html_shows_as_text_and_comments_vanish() -> None:
    html = render("<!-- a comment -->\n\nText with <b>bold</b> and <img src=x onerror=alert(1)>.\n\n"
                  "<div align=\"center\">\n<script>alert(1)</script>\n</div>\n\n<!--\nlong\ncomment\n-->")
    assert "comment" not in html
    assert "<b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html
    assert "<script" not in html and "<img" not in html and "<div" not in html
    assert '<p class="raw-html">&lt;div align="center"&gt;' in html


@pytest.mark.parametrize("url", ["javascript:alert(1)", "jav&#x61;script:alert(1)", "java&#09;script:x",
                                 "data:text/html,x", "vbscript:x"])
def test_links_other_than_web_mail_or_relative_lose_their_url(url: str) -> None:
    html = render(f"[text]({url}) and ![alt]({url})")
    assert "href" not in html and "<img" not in html
    assert visible(html) == "text and alt"


# ---------------------------------------------------------------- typography


def test_typography_on_and_off() -> None:
    text = 'En -- dash, em --- dash, "double" and \'single\' quotes, it\'s.'
    assert visible(render(text, PageContext(typography=True))) == "En – dash, em — dash, “double” and ‘single’ quotes, it’s."
    assert visible(render(text, PageContext(typography=False))) == text
    assert prose.plain('A "title" -- here', "markdown", typography=True) == "A “title” – here"
    assert prose.plain('A "title" -- here', "markdown") == 'A "title" -- here'


# ---------------------------------------------------------------- MyST on the same parser


def test_myst_blocks_that_python_markdown_never_read() -> None:
    page = PageContext(entry="p")
    text = """---
title: front matter
---

:::{note}
A colon-fenced note with $x^2$.
:::

Term
: Its definition.

A footnote[^1].

[^1]: The note.

$$ a = b $$ (eq-a)

\\begin{align}
a &= b \\\\
c &= d
\\end{align}

(para-target)=
A paragraph with a target, see {eq}`eq-a`.

```{index} single: hidden
```
"""
    html = render(text, page)
    assert "front matter" not in html and "index" not in visible(html)
    assert '<aside class="admonition note">' in html and "<math" in html
    assert "<dl>" in html and "<dt>Term</dt>" in html
    assert 'class="footnote-ref"' in html and "The note." in html
    assert '<div class="math-block" id="eq-a">' in html and '<span class="eqno">(1)</span>' in html
    assert html.count('<math display="block">') == 2
    assert '<p id="label-para-target">A paragraph with a target' in html
    assert '<a class="xref xref-internal" href="#eq-a" rel="noopener noreferrer">(1)</a>' in html


def test_thematic_breaks_are_no_front_matter() -> None:
    html = squeeze(render("---\n\n## After a rule\n\n---\n\nText"))
    assert html.count("<hr>") == 2 and "After a rule</h2>" in html


def test_footnotes_of_two_texts_on_one_page_keep_apart() -> None:
    page = PageContext(entry="p")
    first, second = render("One[^a].\n\n[^a]: First.", page), render("Two[^a].\n\n[^a]: Second.", page)
    ids = re.findall(r'id="([^"]+)"', first) + re.findall(r'id="([^"]+)"', second)
    assert len(ids) == len(set(ids)) == 4


def test_footnotes_defined_in_another_cell_lose_nothing() -> None:
    page = PageContext(entry="p")
    referring = render("As noted[^far] and here[^near].\n\n[^near]: Near note.", page)
    defining = render("Text.\n\n[^far]: The far definition.", page)
    assert '<sup class="footnote-ref">[far]</sup>' in referring  # its definition is in another cell
    assert re.search(r'<sup class="footnote-ref"><a href="#fn-\d+-1" id="fnref-\d+-1"[^>]*>\[1\]</a>', referring)
    assert "Near note." in referring and "[^" not in visible(referring + defining)
    assert "The far definition." in defining and "footnote-backref" not in defining


def test_headings_get_ids_unique_on_the_page() -> None:
    page = PageContext(entry="p")
    html = render("## Results\n\n## Results", page) + render("## Results", page)
    assert re.findall(r'<h2 id="([^"]+)"', html) == ["results", "results-2", "results-3"]


def test_labels_are_collected_as_rendering_numbers_them() -> None:
    texts = ["```{exercise}\n:label: ex-a\nQ.\n```\n\n```{figure} a.png\n:name: fig-a\nCap.\n```",
             "$$x$$ (eq-b)\n\n```{prf:theorem}\n:label: th\nT.\n```"]
    labels = labels_of("page", texts)
    assert {k: v.text for k, v in labels.items()} == {
        "ex-a": "Exercise 1", "fig-a": "Fig. 1", "eq-b": "(1)", "th": "Theorem 1"}
    page = PageContext(entry="page", labels=labels)
    html = "".join(render(t, page) for t in texts) + render("{numref}`Figure %s <fig-a>`, {ref}`th`", page)
    assert "Figure 1</a>" in html and "Theorem 1</a>" in html


# ---------------------------------------------------------------- bounds and warnings


def test_nesting_is_bounded() -> None:
    assert markdown_parser().options["maxNesting"] == MAX_NESTING
    quotes = render("> " * 500 + "deep")  # markdown-it stops nesting at maxNesting, never recursing further
    assert quotes.count("<blockquote>") <= MAX_NESTING + 1
    page = PageContext(entry="p")
    fences = 30
    text = "".join(f"{'`' * (fences - i + 3)}{{note}}\n" for i in range(fences)) + "core\n"
    text += "".join(f"{'`' * (i + 4)}\n" for i in range(fences))
    html = render(text, page, first_line=10)
    assert html.count("<aside") == MAX_DIRECTIVE_DEPTH + 1
    assert "core" in visible(html)  # the too-deep body shows as text
    assert any("nested more than" in w.message and w.line > 10 for w in page.warnings)


def test_warnings_name_their_line() -> None:
    page = PageContext(entry="p")
    render("Intro.\n\n```{no-such-directive}\nKept.\n```\n\n{no-such-role}`text` and {ref}`missing`", page,
           first_line=40)
    assert [(w.line, w.message.split(":")[0]) for w in page.warnings] == [
        (42, "unknown directive {no-such-directive}"), (46, "unknown role {no-such-role}"),
        (46, "{ref}`missing`")]


# ---------------------------------------------------------------- the registry


def test_a_new_role_plugs_in_through_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    class Shout(Role):
        def resolve(self, call: RoleCall, page: PageContext) -> None:
            page.extensions.setdefault("shouted", []).append(call.content)

        def render(self, call: RoleCall, out: object) -> str:
            return out.macro("element", "strong", call.content.upper())  # type: ignore[attr-defined]

    registry = default_registry()
    monkeypatch.setitem(registry.roles, "shout", Shout())
    page = PageContext(entry="p")
    assert "<strong>HELLO</strong>" in render("Say {shout}`hello`.", page)
    assert page.extensions["shouted"] == ["hello"] and not page.warnings
