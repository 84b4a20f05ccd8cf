"""DOT → SVG: the bundled Graphviz of the ``pygraphviz`` wheel in-process, else a ``dot``
executable on PATH, else :class:`RenderUnavailable` (callers then show the DOT text). A
Graphviz that fails to lay a graph out (pygraphviz's ``OSError("trouble in init_rank")``,
``dot`` exiting non-zero) is :class:`RenderFailed`, a RenderUnavailable: every display then
shows the same note and DOT text as with no Graphviz, not a formatter's traceback.

Renders are cached by DOT text, so stepping back and forth through a history is instant.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import subprocess

from symnb.errors import ArgumentError

INSTALL_HINT = "pip install pygraphviz (its wheel bundles Graphviz), or put Graphviz's dot on PATH"


class RenderUnavailable(RuntimeError):
    """No Graphviz could be found; the message says how to get one."""


class RenderFailed(RenderUnavailable):
    """Graphviz was found but could not draw this graph; the message says what it said."""


def _pygraphviz(dot: str) -> str | None:
    try:
        import pygraphviz
    except ImportError:
        return None
    with _quiet_stderr():  # Graphviz's fontconfig may warn on fd 2, into the notebook
        return pygraphviz.AGraph(string=dot).draw(format="svg", prog="dot").decode("utf-8")


@contextlib.contextmanager
def _quiet_stderr():
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _dot_executable(dot: str) -> str | None:
    exe = shutil.which("dot")
    if exe is None:
        return None
    done = subprocess.run([exe, "-Tsvg"], input=dot, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"dot failed: {done.stderr.strip()}")
    return done.stdout


RENDERERS = (_pygraphviz, _dot_executable)


@functools.lru_cache(maxsize=64)
def render_svg(dot: str) -> str:
    """SVG text (no XML prolog, so it can sit inside HTML) for DOT text. Raises
    RenderUnavailable when no Graphviz can be found, RenderFailed when each one found failed
    (the next is tried after one fails)."""
    failures = []
    for renderer in RENDERERS:
        try:
            svg = renderer(dot)
        except Exception as exc:  # noqa: BLE001 - a layout failure must not break a display
            failures.append(_failure(exc))
            continue
        if svg is not None:
            return clean_svg(svg)
    if failures:
        raise RenderFailed(f"cannot draw the graph: Graphviz failed ({'; '.join(failures)})")
    raise RenderUnavailable(f"cannot draw the graph: no Graphviz found ({INSTALL_HINT})")


def _failure(exc: Exception) -> str:
    """``OSError: trouble in init_rank``: what a renderer raised, on one line."""
    text = " ".join(str(exc).split())
    if len(text) > 300:
        text = text[:300] + " ..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


#: the output formats Graphviz documents (graphviz.org/docs/outputs); a build may lack a few
#: (pygraphviz's wheel has no bmp, tif, vml, webp): drawing in one is then RenderFailed
FORMATS = frozenset(
    "bmp canon cmap cmapx cmapx_np dot dot_json eps fig gd gd2 gif gv imap imap_np ismap jpe "
    "jpeg jpg json json0 pdf pic plain plain-ext png pov ps ps2 svg svgz tif tiff tk vml vmlz "
    "vrml wbmp webp xdot xdot1.2 xdot1.4 xdot_json".split()
)


def output_format(fmt, source: str = "") -> str:
    """``fmt`` as Graphviz spells it ("PNG" is "png"); one it does not know is an
    ArgumentError naming it and the formats there are, not Graphviz's failure (pygraphviz
    raised ``TypeError: 'int' object is not subscriptable``). ``source``: where ``fmt``
    came from, for the message."""
    name = fmt.lower() if isinstance(fmt, str) else fmt
    if name not in FORMATS:
        where = f" ({source})" if source else ""
        raise ArgumentError(
            f"cannot draw a graph in the format {fmt!r}{where}: Graphviz's output formats are "
            f"{', '.join(sorted(FORMATS))}"
        )
    return name


def render_bytes(dot: str, fmt: str) -> bytes:
    """DOT text drawn in a Graphviz output format ("png", "svg", "pdf"...; any case); "dot"
    is the text itself. Raises ArgumentError for a format Graphviz does not know,
    RenderUnavailable when no Graphviz can be found, RenderFailed when it cannot draw in
    that format."""
    fmt = output_format(fmt)
    if fmt == "dot":
        return dot.encode("utf-8")
    try:
        import pygraphviz
    except ImportError:
        pygraphviz = None
    if pygraphviz is not None:
        with _quiet_stderr():
            try:
                return pygraphviz.AGraph(string=dot).draw(format=fmt, prog="dot")
            except (TypeError, ValueError, OSError) as exc:  # (a format not built in: TypeError)
                raise RenderFailed(
                    f"cannot draw the graph as {fmt!r}: this Graphviz (pygraphviz's) could "
                    f"not ({_failure(exc)}); svg, png and pdf are always there"
                ) from None
    exe = shutil.which("dot")
    if exe is None:
        raise RenderUnavailable(f"cannot draw the graph: no Graphviz found ({INSTALL_HINT})")
    done = subprocess.run([exe, f"-T{fmt}"], input=dot.encode(), capture_output=True, timeout=60)
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip()
        raise RenderFailed(f"cannot draw the graph as {fmt!r}: dot failed: {said}")
    return done.stdout


def renderer_name() -> str:
    """Which renderer ``render_svg`` would use, for reports and error messages."""
    try:
        import pygraphviz  # noqa: F401

        return "pygraphviz"
    except ImportError:
        return "dot" if shutil.which("dot") else "none"


_PROLOG = re.compile(r"<\?xml.*?\?>|<!DOCTYPE.*?>|<!--.*?-->", re.S)


def clean_svg(svg: str) -> str:
    return _PROLOG.sub("", svg).strip()
