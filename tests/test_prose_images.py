"""Prose publishes images only: what a notebook's Markdown or a gallery's reST names is
published when it is an image by extension and content, never hidden, never another kind of file.

One shared build (module scope) of a project whose prose names every kind of file of its folder.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import nbformat
import pytest

from tests.conftest import run_cli
from tests.page_reader import PageParts, parts

PNG = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + b"\0" * 24
JPEG = b"\xff\xd8\xff\xe0\0\x10JFIF\0" + b"\0" * 24
GIF = b"GIF89a" + b"\0" * 24
WEBP = b"RIFF\x1a\0\0\0WEBPVP8L" + b"\0" * 24
AVIF = b"\0\0\0\x1cftypavif\0\0\0\0" + b"\0" * 24
SVG = (b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script>'
       b'<a href="javascript:alert(3)"><rect width="5" height="5"/></a></svg>')
HIDDEN_OR_OTHER = {  # what the prose names -> why it must not be published
    "_images/.git/config": "hidden",
    ".secret.png": "hidden",
    ".hid/inside.png": "hidden",
    "helper.py": "not an image",
    "other.ipynb": "not an image",
    "fake.png": "not a PNG image",
    "png-named.jpg": "not a JPEG image",
    "broken.svg": "SVG",
    "../outside.png": "entry's folder",
    "/etc/hostname.png": "entry's folder",
    "attachment:fake.png": "not a PNG image",  # a cell's attachment, by the same rule
    "attachment:missing.png": "no attachment of that name",
    "attachment:notes.txt": "no attachment of that name with an image type",
}
# A Markdown cell's attachments (nbformat's "attachments"): published when they are images.
ATTACHMENTS = {"pic.png": {"image/png": base64.b64encode(PNG).decode()},
               "drawing.svg": {"image/svg+xml": SVG.decode()},
               "fake.png": {"image/png": base64.b64encode(b"<html>not a png</html>").decode()},
               "notes.txt": {"text/plain": "SECRET-ATTACHED-TEXT"}}
IMAGES = {"img/plot.png": PNG, "img/photo.jpeg": JPEG, "img/anim.gif": GIF, "img/pic.webp": WEBP,
          "img/pic.avif": AVIF, "img/drawing.svg": SVG, "img/with space.png": PNG}

MARKDOWN = "\n\n".join([
    "# Images in prose",
    " ".join(f"![alt of {rel}]({rel.replace(' ', '%20')})" for rel in IMAGES),
    " ".join(f"![alt of {rel}]({rel})" for rel in HIDDEN_OR_OTHER),
    "![math in the path]($x$.png) ![escaped](a\\_b.png)",
    "```{image} _images/.git/config\n:alt: directive alt of the git config\n```",
    "```{figure} other.ipynb\n:alt: figure alt of the notebook\nThe caption stays.\n```",
    "```{figure} img/plot.png\n:alt: figure of the plot\nA real figure.\n```",
    "![attached picture](attachment:pic.png) ![attached drawing](attachment:drawing.svg)",
])

GALLERY = '''"""
Gallery prose
=============

.. image:: img/plot.png
   :alt: rst alt of the plot

.. figure:: .secret.png
   :alt: rst alt of the secret

   Its caption.
"""

# %%
# A text cell naming the helper:
#
# .. image:: helper.py
#    :alt: rst alt of the helper
#
# and an SVG:
#
# .. image:: img/drawing.svg
#    :alt: rst alt of the drawing

print("gallery ran")
'''


def parsed(html: str) -> PageParts:
    """The images a page shows (``images``: src, alt) and its visible text (``text``)."""
    return parts(html)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    project = tmp_path_factory.mktemp("prose-images")
    demos = project / "demos"
    for rel, data in IMAGES.items():
        (demos / rel).parent.mkdir(parents=True, exist_ok=True)
        (demos / rel).write_bytes(data)
    (demos / "_images" / ".git").mkdir(parents=True)
    (demos / "_images" / ".git" / "config").write_text("[remote]\nurl = SECRET-GIT-CONFIG\n")
    (demos / ".secret.png").write_bytes(PNG)
    (demos / ".hid").mkdir()
    (demos / ".hid" / "inside.png").write_bytes(PNG)
    (demos / "helper.py").write_text("HELPER_SOURCE = 1\n")
    (demos / "fake.png").write_text("plain text, not a PNG\n")
    (demos / "png-named.jpg").write_bytes(PNG)
    (demos / "broken.svg").write_text("<svg><unclosed>")
    (project / "outside.png").write_bytes(PNG)
    other = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(2)")])
    other.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text="OTHER-STORED-OUTPUT\n")]
    nbformat.write(other, demos / "other.ipynb")
    prose = nbformat.v4.new_markdown_cell(MARKDOWN)
    prose.attachments = ATTACHMENTS
    # a cell sees its own attachments only, as in Jupyter
    elsewhere = nbformat.v4.new_markdown_cell("![alt of another cell's](attachment:pic.png)")
    notebook = nbformat.v4.new_notebook(cells=[prose, nbformat.v4.new_code_cell("print('notebook ran')"), elsewhere])
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    nbformat.write(notebook, demos / "pictures.ipynb")
    (demos / "plot_gallery.py").write_text(GALLERY)
    # a helper module the demos import: not an entry of its own (as Sphinx-Gallery's ignore_pattern)
    (project / "pyproject.toml").write_text('[tool.site_builder]\nignore_pattern = "helper\\\\.py$"\n')
    result = run_cli("build", cwd=project, timeout=170)
    assert result.returncode == 0, result.stderr
    return project / "build", result.stderr


def published(site: Path, entry: str) -> dict[str, bytes]:
    folder = site / entry / "_images"
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_only_images_of_the_folder_are_published(built: tuple[Path, str]) -> None:
    site, _ = built
    files = published(site, "pictures")
    attached = {rel: data for rel, data in files.items() if rel.startswith("attachments/")}
    assert set(files) - set(attached) == set(IMAGES)  # nothing hidden, no helper, no notebook, no fake
    assert sorted(rel.rsplit(".", 1)[1] for rel in attached) == ["png", "svg"]  # the two images attached
    assert PNG in attached.values()
    for rel, data in IMAGES.items():
        if not rel.endswith(".svg"):
            assert files[rel] == data, rel
    everything = b"".join(p.read_bytes() for p in site.rglob("*") if p.is_file())
    assert b"SECRET-GIT-CONFIG" not in everything and b"HELPER_SOURCE" not in everything
    assert b"OTHER-STORED-OUTPUT" not in everything  # the other notebook's outputs never show
    assert b"SECRET-ATTACHED-TEXT" not in everything  # an attachment that is no image goes nowhere


def test_published_svg_runs_nothing(built: tuple[Path, str]) -> None:
    site, _ = built
    for entry in ("pictures", "plot_gallery"):
        svg = published(site, entry)["img/drawing.svg"]
        assert b"<rect" in svg
        assert b"script" not in svg and b"onload" not in svg and b"javascript" not in svg
    svg = next(data for rel, data in published(site, "pictures").items() if rel.startswith("attachments/") and rel.endswith(".svg"))
    assert b"<rect" in svg and b"script" not in svg and b"onload" not in svg


def test_attached_images_show_and_their_download_keeps_them_made_safe(built: tuple[Path, str]) -> None:
    site, _ = built
    page = parsed((site / "pictures" / "index.html").read_text(encoding="utf-8"))
    shown = {alt: src for src, alt in page.images}
    assert re.fullmatch(r"_images/attachments/\w+\.png", shown["attached picture"])
    assert re.fullmatch(r"_images/attachments/\w+\.svg", shown["attached drawing"])
    assert "alt of another cell's" not in shown
    download = nbformat.read(site / "pictures" / "pictures.ipynb", as_version=4)
    nbformat.validate(download)  # the attachments' shape too
    kept = download.cells[0].attachments
    assert set(kept) == {"pic.png", "drawing.svg"}  # Jupyter shows them from the download too
    assert base64.b64decode(kept["pic.png"]["image/png"]) == PNG
    assert "script" not in str(kept["drawing.svg"]) and "onload" not in str(kept["drawing.svg"])


def test_refused_images_show_their_alt_text_and_no_syntax(built: tuple[Path, str]) -> None:
    site, _ = built
    page = parsed((site / "pictures" / "index.html").read_text(encoding="utf-8"))
    shown = {alt: src for src, alt in page.images}
    for rel in IMAGES:
        assert shown[f"alt of {rel}"] == "_images/" + rel.replace(" ", "%20")
    assert shown["figure of the plot"] == "_images/img/plot.png"
    text = " ".join("".join(page.text).split())
    for rel in HIDDEN_OR_OTHER:
        assert f"alt of {rel}" not in shown and f"alt of {rel}" in text  # alt text, no image
    assert "directive alt of the git config" in text and "figure alt of the notebook" in text
    assert "The caption stays." in text
    for raw in ("![", "](", "{image}", "{figure}", ":alt:", "```"):
        assert raw not in text, raw
    assert all(src.startswith("_images/") for src, _ in page.images)


def test_each_refusal_is_a_warning_naming_entry_and_path(built: tuple[Path, str]) -> None:
    _, stderr = built
    for rel, why in HIDDEN_OR_OTHER.items():
        lines = [line for line in stderr.splitlines() if line.startswith(f"pictures: the image {rel} ")]
        assert len(lines) == 1, (rel, stderr)  # once, though named twice
        assert "is not published" in lines[0] and why in lines[0], lines[0]
    assert "\x02" not in stderr and "\x03" not in stderr  # Python-Markdown's placeholders
    # markdown-it reads a destination as written: no math in it, backslash escapes undone
    assert "pictures: the image a_b.png " in stderr and "pictures: the image $x$.png " in stderr


def test_rest_images_follow_the_same_rule(built: tuple[Path, str]) -> None:
    site, stderr = built
    assert set(published(site, "plot_gallery")) == {"img/plot.png", "img/drawing.svg"}
    page = parsed((site / "plot_gallery" / "index.html").read_text(encoding="utf-8"))
    assert ("_images/img/plot.png", "rst alt of the plot") in page.images
    assert ("_images/img/drawing.svg", "rst alt of the drawing") in page.images
    text = "".join(page.text)
    assert "rst alt of the secret" in text and "Its caption." in text and "rst alt of the helper" in text
    assert re.search(r"^plot_gallery: the image \.secret\.png .*hidden", stderr, re.M)
    assert re.search(r"^plot_gallery: the image helper\.py .*not an image", stderr, re.M)
