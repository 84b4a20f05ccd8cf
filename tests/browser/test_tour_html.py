"""build/tour.html (``make tour``, the page ``make demo`` writes) in headless Chromium with the
network blocked: formulas are laid out as math, and the stepper's Next changes the graph.

Playwright drives Debian's Chromium (``/usr/bin/chromium``); no browser is ever downloaded.
Every request that is not for the page itself is refused, as in an offline classroom.
"""

from __future__ import annotations

import pytest

from tests.browser.browser import launch, offline_page, sync_api

pytest.importorskip("nbconvert")
pytest.importorskip("pygraphviz")
pytest.importorskip("sklearn")
from tests.helpers import needs_c  # noqa: E402
from tests.magics.nbtools import build_tour  # noqa: E402

pytestmark = needs_c  # the tour compiles its functions with --backend c

# The stacking of a fraction and the raise of a superscript: only a MathML layout does both.
MATH_LAYOUT = """() => {
  const frac = document.querySelector('.symnb-formula mfrac');
  const sup = document.querySelector('.symnb-formula msup');
  const [num, den] = [...frac.children].map(e => e.getBoundingClientRect());
  const [base, script] = [...sup.children].map(e => e.getBoundingClientRect());
  return {stacked: num.bottom <= den.top + 1, raised: script.top < base.top,
          wide: frac.getBoundingClientRect().width > 20,
          text: document.body.innerText};
}"""
VISIBLE = """s => {
  const f = [...s.querySelectorAll('.symnb-frame')].filter(e => !e.hidden);
  return {steps: f.map(e => e.dataset.step),
          svg: f.length ? f[0].querySelector('svg').outerHTML : '',
          info: f.length ? f[0].querySelector('.symnb-info').innerText : '',
          position: s.querySelector('.symnb-position').innerText,
          nodes: f.length ? [...f[0].querySelectorAll('svg g.node')].map(
            g => g.querySelector('title').textContent + ' ' + g.getAttribute('class')) : []};
}"""


@pytest.fixture(scope="module")
def tour(tmp_path_factory):
    return build_tour(tmp_path_factory)


def test_tour_html_offline_formulas_and_stepper(tour, tmp_path):
    blocked: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = launch(pw)
        page = offline_page(browser, blocked)
        page.goto(tour.as_uri(), wait_until="load")
        math = page.evaluate(MATH_LAYOUT)
        assert math["stacked"] and math["raised"] and math["wide"]
        assert "\\frac" not in math["text"] and "\\tanh" not in math["text"]
        shot = str(tmp_path / "formula.png")
        page.locator(".symnb-formula:has(mfrac)").first.screenshot(path=shot)

        stepper = page.locator(".symnb-stepper").first
        stepper.scroll_into_view_if_needed()
        handle = stepper.element_handle()
        start = page.evaluate(VISIBLE, handle)
        assert start["steps"] == ["0"] and start["info"].startswith("as written")
        stepper.locator(".symnb-next").click()
        after = page.evaluate(VISIBLE, handle)
        stepper.screenshot(path=str(tmp_path / "stepper_after_next.png"))
        assert after["steps"] == ["1"] and after["position"].startswith("1 / ")
        assert after["info"].startswith("step 1/") and "rule" in after["info"]
        assert after["svg"] != start["svg"]
        assert {"var:x", "var:W", "var:b"} <= {n.split()[0] for n in start["nodes"]}
        assert after["nodes"] != start["nodes"]
        marks = {word for n in after["nodes"] for word in n.split()[1:]}
        assert marks & {"added", "changed", "removed"}  # the diff of what the rewrite did
        stepper.locator(".symnb-prev").click()
        assert page.evaluate(VISIBLE, handle)["steps"] == ["0"]
        browser.close()
    assert blocked  # the page asked for CDN scripts (MathJax, require.js) and got nothing
    assert all(not url.startswith("file://") for url in blocked)
