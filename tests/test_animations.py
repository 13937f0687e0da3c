"""Matplotlib animations play under their block: a <video> made with ffmpeg, else an animated
image made with Pillow with a pause control; reduced motion shows the poster frame; the frame
and size caps end in a note; records keep the file for cached and --frozen builds."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.browser_support import describe_violations, serious_look, serve_site
from tests.conftest import build_site, copy_of, run_cli, shared_folder, write_demo
from tests.scheme_looks import SchemeLooks

pytest.importorskip("matplotlib", reason="animations are Matplotlib's")

DEMO = '''
"""anim.py — two animations.

Purpose
-------
Animate a sine and some noise.
"""
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.animation import ArtistAnimation, FuncAnimation

# %% B-func
fig, ax = plt.subplots(figsize=(3, 2))
x = np.linspace(0, 2 * np.pi, 50)
(line,) = ax.plot(x, np.sin(x))
ax.set_title("a moving sine")


def update(i):
    line.set_ydata(np.sin(x + i / 4))
    return (line,)


ani = FuncAnimation(fig, update, frames=25, interval=40)

# %% B-artist
fig2, ax2 = plt.subplots(figsize=(1.5, 1.5))
ax2.set_title("noise")
rng = np.random.default_rng(0)
frames = [[ax2.imshow(rng.random((6, 6)), animated=True)] for _ in range(3)]
noise = ArtistAnimation(fig2, frames, interval=200)
'''


def _build(project: Path, settings: str, env: dict[str, str] | None = None) -> None:
    (project / "pyproject.toml").write_text(f"[tool.site_builder]\n{settings}\n", encoding="utf-8")
    write_demo(project, "anim", DEMO)
    build_site(project, env=env)


@pytest.fixture(scope="module")
def video_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Encoded with imageio-ffmpeg's ffmpeg; B-func has more frames than animation_frames."""
    pytest.importorskip("imageio_ffmpeg", reason="the video path needs ffmpeg (the animations extra)")
    return shared_folder(tmp_path_factory, "animation-video", lambda project: _build(project, "animation_frames = 10"))


@pytest.fixture(scope="module")
def image_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """No ffmpeg: Pillow makes animated images; B-func's is over animation_size."""
    # figure_scale = 1: a quarter of the pixels for Pillow to encode (the slower path); and of
    # B-func's 25 frames the first 10, which are already about 35 kB, over animation_size
    return shared_folder(tmp_path_factory, "animation-image", lambda project: _build(
        project, "animation_size = 20_000\nanimation_frames = 10\nfigure_scale = 1", {"SITE_BUILDER_FFMPEG": "none"}))


def cell(project: Path, name: str) -> str:
    page = (project / "build" / "anim" / "index.html").read_text(encoding="utf-8")
    start = page.index(f'<section id="{name}"')
    return page[start:page.index("</section>", start)]


def test_animation_plays_as_a_video_with_its_first_frame_as_poster(video_site: Path) -> None:
    func = cell(video_site, "B-func")
    video = re.search(r"<video ([^>]*)><source src=\"([^\"]+)\" type=\"video/mp4\">", func)
    assert video, func
    attributes, src = video.groups()
    for word in ("controls", "muted", "loop", 'preload="metadata"', 'poster="_site_builder/B-func-figure-1.png"',
                 'width="300"', 'height="200"'):
        assert word in attributes.split() or word in attributes, word
    assert "autoplay" not in attributes
    movie = (video_site / "build" / "anim" / src).read_bytes()
    assert movie[4:8] == b"ftyp"  # an MP4
    assert (video_site / "build" / "anim" / "_site_builder" / "B-func-figure-1.png").read_bytes()[:4] == b"\x89PNG"
    # the still figure is not shown besides its animation
    assert "<img" not in func
    # the frame cap: the rest is left out, said on the block's output
    assert "the animation has 25 frames; the first 10 are shown" in func and "animation_frames" in func
    assert "the animation has" not in cell(video_site, "B-artist")


def test_thumbnail_and_notebook_use_the_first_frame(video_site: Path) -> None:
    notebook = json.loads((video_site / "build" / "anim" / "anim.ipynb").read_text())
    nbformat.validate(nbformat.from_dict(notebook))  # the poster frames' outputs and their sizes
    images = [o for c in notebook["cells"] if c["cell_type"] == "code" for o in c["outputs"]
              if o["output_type"] == "display_data" and "image/png" in o["data"]]
    assert len(images) == 2 and images[0]["metadata"]["image/png"] == {"width": 300, "height": 200}
    index = (video_site / "build" / "index.html").read_text()
    thumb = re.search(r'<img[^>]+src="([^"]*thumb[^"]*)"', index)
    assert thumb and (video_site / "build" / thumb.group(1)).is_file()


def test_records_keep_the_file_for_a_frozen_build(video_site: Path, tmp_path: Path) -> None:
    record = json.loads((video_site / "_freeze" / "anim" / "_site_builder" / "record.json").read_text())
    kinds = [a["kind"] for b in record["blocks"] for a in b["artifacts"]]
    assert kinds == ["figure", "animation", "figure", "animation"]
    before = cell(video_site, "B-func")
    project = copy_of(video_site, tmp_path, video_site.name)  # the others read the shared one; the name is the site's title
    done = run_cli("build", "--frozen", cwd=project)
    assert done.returncode == 0, done.stderr
    assert cell(project, "B-func") == before


def test_without_ffmpeg_pillow_makes_an_animated_image_with_a_pause_control(image_site: Path) -> None:
    artist = cell(image_site, "B-artist")
    assert "<video" not in artist
    assert re.search(r'<input type="checkbox" class="animation-pause" id="B-artist-animation-1">'
                     r'<label class="animation-pause-label" for="B-artist-animation-1">Pause animation</label>', artist)
    assert re.search(r'<source srcset="_site_builder/B-artist-figure-1.png" media="\(prefers-reduced-motion: reduce\)">'
                     r'<img src="_site_builder/B-artist-animation-1.(webp|png)"', artist)
    movie = next((image_site / "build" / "anim" / "_site_builder").glob("B-artist-animation-1.*")).read_bytes()
    assert movie[:4] == b"RIFF" or movie[:4] == b"\x89PNG"


def test_an_animation_over_the_size_cap_shows_its_first_frame_and_a_note(image_site: Path) -> None:
    func = cell(image_site, "B-func")
    assert "animation-pause" not in func and "<video" not in func
    assert '<img src="_site_builder/B-func-figure-1.png"' in func
    assert re.search(r"the animation(&#39;|')s (WEBP|PNG) is [\d.]+ kB, over animation_size \(20\.0 kB\)", func), func
    assert "raise animation_size in [tool.site_builder]" in func
    assert not list((image_site / "build" / "anim" / "_site_builder").glob("B-func-animation-*"))


# ---------------------------------------------------------------- in a browser


@pytest.fixture(scope="module")
def image_url(browser: Any, image_site: Path) -> Iterator[str]:
    with serve_site(image_site / "build") as url:
        yield url


@pytest.fixture(scope="module")
def video_url(browser: Any, video_site: Path) -> Iterator[str]:
    with serve_site(video_site / "build") as url:
        yield url


PLAYING_SRC = "() => document.querySelector('section#B-artist picture img').currentSrc"


def test_the_animated_image_pauses_and_reduced_motion_shows_the_first_frame(open_watched_page: Any, image_url: str) -> None:
    page, watch = open_watched_page(image_url)
    page.goto(image_url + "anim/index.html")
    page.wait_for_function(f"() => ({PLAYING_SRC})() !== ''")
    assert re.search(r"B-artist-animation-1\.(webp|png)$", page.evaluate(PLAYING_SRC))
    still = page.locator("section#B-artist img.animation-still")
    assert not still.is_visible()
    page.locator("section#B-artist label.animation-pause-label").click()
    assert still.is_visible() and not page.locator("section#B-artist picture").is_visible()
    watch.assert_clean()

    page, watch = open_watched_page(image_url, reduced_motion="reduce")
    page.goto(image_url + "anim/index.html")
    page.wait_for_function(f"() => ({PLAYING_SRC})() !== ''")
    assert page.evaluate(PLAYING_SRC).endswith("B-artist-figure-1.png")
    assert not page.locator("section#B-artist label.animation-pause-label").is_visible()
    watch.assert_clean()


def test_the_video_shows_its_poster_until_played(open_watched_page: Any, video_url: str) -> None:
    page, watch = open_watched_page(video_url, reduced_motion="reduce")
    page.goto(video_url + "anim/index.html")
    video = page.locator("section#B-func video")
    assert video.evaluate("v => v.paused && v.muted && v.loop && v.controls")
    assert video.evaluate("v => v.poster").endswith("B-func-figure-1.png")
    watch.assert_clean()


@pytest.mark.parametrize("which, scheme", [("image", "light"), ("image", "dark"), ("video", "dark")])
def test_animation_pages_have_no_serious_accessibility_violation(scheme_looks: SchemeLooks, request: pytest.FixtureRequest,
                                                                 scheme: str, which: str) -> None:
    base = request.getfixturevalue(f"{which}_url")
    serious, watch = scheme_looks.seen(base, base + "anim/index.html", scheme, serious_look)
    assert not serious, describe_violations(serious)
    watch.assert_clean()
