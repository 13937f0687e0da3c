"""Looking at a page in both colour schemes from one load (or one walk through it): SchemeLooks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from tests.browser_support import PageWatch

T = TypeVar("T")

SCHEMES = ("light", "dark")
# What a look saw in the scheme its own test did not ask for, kept (in this test process) for the
# test that asks for that scheme, usually the next one: (look's key, scheme) -> (result, watch).
_SEEN_IN_OTHER_SCHEME: dict[tuple[Any, ...], tuple[Any, PageWatch]] = {}


def _look_key(*functions: Callable[..., Any] | None) -> tuple[Any, ...]:
    """Who a function is: its code and the values it closes over (so a test's parameters count)."""
    return tuple((f.__code__, tuple(repr(c.cell_contents) for c in f.__closure__ or ())) if f else None
                 for f in functions)


class SchemeLooks:
    """Looks at pages in one colour scheme, each page loaded once for both: after this test's scheme,
    the page is switched to the other one (``emulate_media``, as when the reader changes the system
    setting; the site's colours are media queries) and looked at again, and that result is kept for
    the other scheme's test, which then loads nothing. Each scheme's result and trouble are its own."""

    def __init__(self, open_watched_page: Callable[..., tuple[Any, PageWatch]]) -> None:
        self._open = open_watched_page
        self._opened: dict[str, tuple[Any, PageWatch]] = {}  # one page per context options

    def seen(self, base: str, url: str, scheme: str, look: Callable[[Any, str], T], *, both: bool = True,
             prepare: Callable[[Any], None] | None = None, **context_options: Any) -> tuple[T, PageWatch]:
        """What ``look(page, scheme)`` returns on ``url`` (below ``base``) shown in ``scheme``, and the
        trouble its page's watch recorded, from loading through that look (``assert_clean`` it).

        ``both=False`` looks in ``scheme`` only. ``prepare(page)`` runs once after loading, before the
        looks; a look only observes (it may write a file named for the scheme it is given) and takes
        the scheme as its argument, not from a variable it closes over (that would keep the schemes'
        results apart: correct, slower).
        """
        key = (base, url, repr(sorted(context_options.items())), *_look_key(look, prepare))
        kept = _SEEN_IN_OTHER_SCHEME.pop((*key, scheme), None)
        if kept is not None:
            return kept
        options = repr(sorted(context_options.items()))
        if options not in self._opened:
            self._opened[options] = self._open(base, color_scheme=scheme, **context_options)
        page, watch = self._opened[options]
        page.emulate_media(color_scheme=scheme)  # back from a look in the other scheme
        start = len(watch.problems)
        page.goto(url)
        if prepare:
            prepare(page)
        loaded = len(watch.problems)
        result = look(page, scheme)
        mine = PageWatch(base, watch.problems[start:], [url], watch.expected_failures)
        if not both:
            return result, mine
        other = SCHEMES[1 - SCHEMES.index(scheme)]
        page.emulate_media(color_scheme=other)
        looked = len(watch.problems)
        try:
            other_result = look(page, other)
        except Exception:  # noqa: BLE001 - the other scheme's own test looks again and says why
            return result, mine
        trouble = watch.problems[start:loaded] + watch.problems[looked:]
        _SEEN_IN_OTHER_SCHEME[(*key, other)] = (other_result, PageWatch(base, trouble, [url], watch.expected_failures))
        return result, mine

    def walked(self, base: str, scheme: str, walk: Callable[[Any, Callable[[Callable[[Any, str], Any]], None]], None],
               **context_options: Any) -> tuple[list[Any], PageWatch]:
        """What the looks of ``walk(page, look)`` saw in ``scheme``, in order, and the trouble of the walk.

        ``walk`` goes where a reader goes and hovers, types, clicks, asserting as it goes (once: in the
        scheme of the test that walks); each ``look(fn)`` in it keeps ``fn(page, scheme)``, switches the
        page to the other scheme to keep ``fn(page, other)`` for that scheme's test, and switches back.
        The other scheme's test then walks nothing. ``look`` functions only observe; like ``seen``'s, they
        take the scheme as their argument, and ``walk`` closes over no scheme.
        """
        key = ("walk", base, repr(sorted(context_options.items())), *_look_key(walk))
        kept = _SEEN_IN_OTHER_SCHEME.pop((*key, scheme), None)
        if kept is not None:
            return kept
        page, watch = self._open(base, color_scheme=scheme, **context_options)
        other = SCHEMES[1 - SCHEMES.index(scheme)]
        seen: dict[str, list[Any]] = {scheme: [], other: []}
        during: dict[str, set[int]] = {scheme: set(), other: set()}  # the trouble each scheme's looks met
        other_failed = False

        def look(fn: Callable[[Any, str], Any]) -> None:
            nonlocal other_failed
            start = len(watch.problems)
            seen[scheme].append(fn(page, scheme))
            during[scheme].update(range(start, len(watch.problems)))
            if other_failed:
                return
            page.emulate_media(color_scheme=other)
            start = len(watch.problems)
            try:
                seen[other].append(fn(page, other))
            except Exception:  # noqa: BLE001 - the other scheme's own test walks again and says why
                other_failed = True
            during[other].update(range(start, len(watch.problems)))
            page.emulate_media(color_scheme=scheme)

        walk(page, look)

        def trouble(of: str) -> PageWatch:
            skip = during[SCHEMES[1 - SCHEMES.index(of)]]
            return PageWatch(base, [p for i, p in enumerate(watch.problems) if i not in skip], list(watch.visited),
                             watch.expected_failures)

        if not other_failed:
            _SEEN_IN_OTHER_SCHEME[(*key, other)] = (seen[other], trouble(other))
        return seen[scheme], trouble(scheme)
