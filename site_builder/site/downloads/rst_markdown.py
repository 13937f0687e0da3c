"""reST prose -> Markdown, for the Markdown cells of a notebook download.

Jupyter renders Markdown cells, so a Sphinx-Gallery script's reST would show as source
there. docutils parses it (as the page does: Sphinx roles degraded, nothing read from
disk) and this small writer prints the tree back as CommonMark: headings, emphasis,
literals, links, lists, code, math (``$``), asides (block quotes with a bold title) and
simple tables; anything else becomes its text.
"""

from __future__ import annotations

import functools
import re

from docutils import nodes

from site_builder.site.prose.rst import rst_doctree

_ASIDES = {"attention": "Attention", "caution": "Caution", "danger": "Danger", "error": "Error",
           "hint": "Hint", "important": "Important", "note": "Note", "tip": "Tip", "warning": "Warning"}
_SKIPPED = (nodes.comment, nodes.target, nodes.substitution_definition, nodes.system_message,
            nodes.raw, nodes.pending)
_SPECIAL = re.compile(r"([\\`*<\[\]])")


# A pure function of its arguments (as rst.rst_plain: the roles a text names are registered
# by that text), kept so render.prepare makes a build's conversions while the demos start.
@functools.lru_cache(maxsize=4096)
def rst_to_markdown(text: str, heading_offset: int = 0) -> str:
    """``text`` (reST) as Markdown; its top sections become ``#`` headings plus ``heading_offset``."""
    if not text.strip():
        return ""
    document = rst_doctree(text)
    if document is None:
        return text
    return _Writer(heading_offset).blocks(document).strip("\n")


def _indent(text: str, prefix: str, first: str | None = None) -> str:
    lines = text.split("\n")
    head = first if first is not None else prefix
    return "\n".join([head + lines[0], *((prefix + line) if line else line for line in lines[1:])])


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


class _Writer:
    def __init__(self, heading_offset: int) -> None:
        self.level = heading_offset

    # -------------------------------------------------------------- blocks

    def blocks(self, node: nodes.Node) -> str:
        parts = [self.block(child) for child in node.children]
        return "\n\n".join(part for part in parts if part.strip())

    def block(self, node: nodes.Node) -> str:  # noqa: C901 (one branch per node type)
        if isinstance(node, _SKIPPED):
            return ""
        if isinstance(node, nodes.section):
            self.level += 1
            title = next((c for c in node.children if isinstance(c, nodes.title)), None)
            rest = [c for c in node.children if c is not title]
            body = "\n\n".join(p for p in (self.block(c) for c in rest) if p.strip())
            heading = "#" * min(self.level, 6) + " " + self.inline(title) if title is not None else ""
            self.level -= 1
            return f"{heading}\n\n{body}" if body else heading
        if isinstance(node, (nodes.paragraph, nodes.title, nodes.rubric, nodes.caption)):
            text = self.inline(node)
            return f"**{text}**" if isinstance(node, nodes.rubric) else text
        if isinstance(node, nodes.bullet_list):
            return "\n".join(_indent(self.blocks(item), "  ", "- ") for item in node.children)
        if isinstance(node, nodes.enumerated_list):
            start = int(node.get("start", 1))
            return "\n".join(_indent(self.blocks(item), "   ", f"{start + i}. ")
                             for i, item in enumerate(node.children))
        if isinstance(node, (nodes.definition_list, nodes.field_list)):
            items = []
            for item in node.children:
                term = next((self.inline(c) for c in item.children if isinstance(c, (nodes.term, nodes.field_name))), "")
                body = " ".join(self.blocks(c) for c in item.children if isinstance(c, (nodes.definition, nodes.field_body)))
                items.append(_indent(f"**{term}**: {body}", "  ", "- "))
            return "\n".join(items)
        if isinstance(node, (nodes.literal_block, nodes.doctest_block)):
            classes = [c for c in node.get("classes", []) if c not in ("code", "literal-block")]
            language = "pycon" if isinstance(node, nodes.doctest_block) else (classes[0] if classes else "python")
            code = node.astext()
            fence = "````" if "```" in code else "```"
            return f"{fence}{language}\n{code}\n{fence}"
        if isinstance(node, nodes.math_block):
            return f"$$\n{node.astext()}\n$$"
        if isinstance(node, nodes.Admonition):
            title = next((self.inline(c) for c in node.children if isinstance(c, nodes.title)), "")
            title = title or _ASIDES.get(node.tagname, node.tagname.capitalize())
            body = "\n\n".join(p for p in (self.block(c) for c in node.children if not isinstance(c, nodes.title)) if p)
            return _quote(f"**{title}**\n\n{body}")
        if isinstance(node, (nodes.block_quote, nodes.line_block)):
            inner = "  \n".join(self.inline(c) for c in node.children) if isinstance(node, nodes.line_block) else self.blocks(node)
            return _quote(inner)
        if isinstance(node, nodes.transition):
            return "---"
        if isinstance(node, nodes.image):
            return self.image(node)
        if isinstance(node, nodes.table):
            return self.table(node)
        if isinstance(node, (nodes.topic, nodes.sidebar)):
            title = next((self.inline(c) for c in node.children if isinstance(c, nodes.title)), "")
            body = "\n\n".join(p for p in (self.block(c) for c in node.children if not isinstance(c, nodes.title)) if p)
            return f"**{title}**\n\n{body}" if title else body
        if isinstance(node, nodes.Element) and any(isinstance(c, nodes.Body) or isinstance(c, nodes.section)
                                                   for c in node.children):
            return self.blocks(node)  # containers, figures, footnotes: their content
        return self.inline(node) if isinstance(node, nodes.Element) else _escape(node.astext())

    def image(self, node: nodes.Element) -> str:
        return f"![{node.get('alt', '')}]({node.get('uri', '')})"

    def table(self, node: nodes.Element) -> str:
        rows = [[" ".join(self.blocks(entry).split()).replace("|", "\\|") for entry in row.children]
                for row in node.findall(nodes.row)]
        if not rows:
            return ""
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows[1:]])

    # -------------------------------------------------------------- inline

    def inline(self, node: nodes.Node) -> str:
        return "".join(self.span(child) for child in node.children).strip()

    def span(self, node: nodes.Node) -> str:  # noqa: C901 (one branch per node type)
        if isinstance(node, nodes.Text):
            return _escape(node.astext().replace("\n", " "))
        if isinstance(node, _SKIPPED):
            return ""
        inner = "".join(self.span(c) for c in node.children)
        if isinstance(node, (nodes.emphasis, nodes.title_reference)):
            return f"*{inner}*" if inner.strip() else inner
        if isinstance(node, nodes.strong):
            return f"**{inner}**" if inner.strip() else inner
        if isinstance(node, nodes.literal):
            code = node.astext()
            ticks = "``" if "`" in code else "`"
            return f"{ticks}{code}{ticks}"
        if isinstance(node, nodes.math):
            return f"${node.astext()}$"
        if isinstance(node, nodes.reference):
            uri = node.get("refuri", "")
            return f"[{inner}]({uri})" if uri and inner else inner
        if isinstance(node, nodes.image):
            return self.image(node)
        if isinstance(node, (nodes.footnote_reference, nodes.citation_reference)):
            return f"[{inner}]"
        return inner


def _escape(text: str) -> str:
    return _SPECIAL.sub(r"\\\1", text)
