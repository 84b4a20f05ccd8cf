"""Names are drawn as written: Graphviz's escapes (``\\N``, ``\\G``, ``\\L``) are not
expanded, and control characters are shown as escapes, so the SVG stays well-formed XML."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

import symnb as sn
from symnb.viz.graphs import picture

pytest.importorskip("pygraphviz")

SVG = "{http://www.w3.org/2000/svg}"


def test_names_with_escapes_and_control_characters_are_drawn_as_written():
    x = sn.tensor("a\\Nb\\Gc\\Ld\x01e\x0bf", shape=(3,))
    y = sn.exp(x)
    y.name = "out\\N\\L"
    svg = picture(y, title="title \\N\x01").svg()
    root = ET.fromstring(svg)  # well-formed XML: no raw control character
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    assert "a\\Nb\\Gc\\Ld\\x01e\\x0bf" in texts and "out\\N\\L" in texts
    assert "title \\N\\x01" in texts
    tooltips = re.findall(r'xlink:title="([^"]*)"', svg)
    assert any(t.startswith("&#39;a\\Nb\\Gc\\Ld\\x01e") for t in tooltips), tooltips
    assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", svg)


def test_svg_titles_are_the_view_ids_whatever_the_names_hold():
    """A node's ``<title>`` is its view id: ``a\\b`` was ``var:a\\\\b`` (Graphviz undoes a
    doubled backslash in labels only), ``&amp;`` was ``var:&`` (the title of a variable named
    ``&``), two spaces became a space and a no-break space."""
    names = ["a\\b", "&amp;", "&", "end\\", 'q"uote\\"', "two  spaces", "a\\x01"]
    xs = [sn.tensor(name, shape=(3,)) for name in names]
    y = sum(xs[1:], xs[0]) * sn.tensor("a\x01", shape=(3,))
    root = ET.fromstring(picture(y).svg())
    titles = {
        "".join(t.itertext())
        for g in root.iter(f"{SVG}g")
        if "node" in g.get("class", "").split()
        for t in g.iter(f"{SVG}title")
    }
    assert {f"var:{name}" for name in names} <= titles
    # a control character (not XML) is its escape in the title, but still a box of its own
    assert len([g for g in root.iter(f"{SVG}g") if g.get("class", "").startswith("node")]) == (
        len(picture(y).view.nodes)
    )
    edges = {
        "".join(t.itertext())
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "edge"
        for t in g.iter(f"{SVG}title")
    }
    assert "var:a\\b->add#0" in edges
