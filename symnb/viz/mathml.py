"""LaTeX to MathML, for formulas that render with no network and no JavaScript.

A browser lays out MathML itself (Chromium, Firefox, Safari), so a formula written as MathML
when the notebook runs shows in an exported HTML page offline, where MathJax would have to be
fetched from a CDN. This covers the LaTeX that :mod:`symnb.viz.latex` writes (and the same
subset written by hand): groups, ``^``/``_``, ``\\frac``, ``\\sqrt``, ``\\left...\\right``,
``\\operatorname``, ``\\mathrm``/``\\mathbf``, named functions, Greek letters and the usual
operators. An unknown command is kept as its text, never dropped.
"""

from __future__ import annotations

import re
from html import escape

from symnb.viz.latex import GREEK, to_latex
from symnb.viz.theme import STYLE

_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\d+(?:\.\d+)?(?:e[+-]?\d+)?|\s+|.", re.S)
FUNCTIONS = {"exp", "log", "tanh", "sin", "cos", "tan", "max", "min", "det", "ln"}
SYMBOLS = {
    "cdot": "·",
    "times": "×",
    "le": "≤",
    "ge": "≥",
    "ne": "≠",
    "ldots": "…",
    "dots": "…",
    "cdots": "⋯",
    "lfloor": "⌊",
    "rfloor": "⌋",
    "lceil": "⌈",
    "rceil": "⌉",
    "bmod": "mod",
    "to": "→",
    "sum": "∑",
    "prod": "∏",
    "infty": "∞",
    "pm": "±",
    "top": "⊤",
    "wedge": "∧",
    "sim": "∼",
    "backslash": "\\",
    "{": "{",
    "}": "}",
    "_": "_",
    ",": " ",
    "quad": "\u2003",  # an em space: ``\\quad`` around ``\\text{where}`` in latex.py's formulas
}
_OPERATORS = {"-": "−", "*": "∗", "'": "′"}
_FONTS = {"operatorname": "normal", "mathrm": "normal", "mathbf": "bold", "text": "normal"}


def to_mathml(latex: str, display: bool = True) -> str:
    """``<math>`` for a LaTeX formula (without ``$`` delimiters)."""
    tokens = [t for t in _TOKEN.findall(latex) if not t.isspace()]
    body = _Parser(tokens).row(stop=None)
    mode = "block" if display else "inline"
    return f'<math xmlns="http://www.w3.org/1998/Math/MathML" display="{mode}">{body}</math>'


class Formula:
    """A formula in a notebook: MathML as its HTML (rendered offline, also in an exported
    page), its LaTeX for frontends that ask for ``text/latex``."""

    def __init__(self, latex: str):
        self.latex = latex

    def html(self) -> str:
        """The formula's element, without the style sheet (for a card that has it)."""
        return f'<div class="symnb-formula">{to_mathml(self.latex)}</div>'

    def _repr_html_(self):
        return STYLE + self.html()

    def _repr_latex_(self):
        return f"$${self.latex}$$"

    def __repr__(self):
        return self.latex


def formula(obj) -> Formula:
    """The formula of a variable (the expression computing it) or of a LaTeX string."""
    return Formula(obj if isinstance(obj, str) else to_latex(obj))


class _Parser:
    """Recursive descent over the tokens; each method returns MathML text."""

    def __init__(self, tokens: list[str]):
        self.tokens, self.i = tokens, 0

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> str | None:
        token = self.peek()
        self.i += token is not None
        return token

    def row(self, stop) -> str:
        """Items up to ``stop`` (a token, or None for the end), as one ``<mrow>``."""
        items = []
        while self.peek() is not None and self.peek() != stop:
            if self.peek() == r"\right" and stop is not None:
                break
            items.append(self.scripts(self.atom()))
        if stop is not None and self.peek() == stop:
            self.take()
        return f"<mrow>{''.join(items)}</mrow>"

    def scripts(self, base: str) -> str:
        """``base`` with the scripts that follow it; a second superscript (or subscript)
        applies to what the first one made (``{x}^{(1)}^{2}``, which TeX refuses, is
        ``(x^{(1)})^{2}``), never replaces it."""
        sub = sup = None
        while self.peek() in ("^", "_"):
            mark = self.take()
            if (sub if mark == "_" else sup) is not None:
                base, sub, sup = self._scripted(base, sub, sup), None, None
            arg = self.atom()
            sub, sup = (arg, sup) if mark == "_" else (sub, arg)
        return self._scripted(base, sub, sup)

    @staticmethod
    def _scripted(base: str, sub: str | None, sup: str | None) -> str:
        if sub is not None and sup is not None:
            return f"<msubsup>{base}{sub}{sup}</msubsup>"
        if sub is not None:
            return f"<msub>{base}{sub}</msub>"
        return f"<msup>{base}{sup}</msup>" if sup is not None else base

    def group(self) -> str:
        """A ``{...}`` argument (or a single atom)."""
        if self.peek() == "{":
            self.take()
            return self.row(stop="}")
        return self.atom()

    def text_group(self) -> str:
        """The raw text of a ``{...}`` argument (``\\operatorname{log\\_softmax}``)."""
        if self.take() != "{":
            return ""
        parts = []
        while self.peek() not in (None, "}"):
            token = self.take()
            parts.append(SYMBOLS.get(token[1:], token[1:]) if token.startswith("\\") else token)
        self.take()
        return "".join(parts)

    def atom(self) -> str:
        token = self.take()
        if token is None:
            return "<mrow></mrow>"
        if token == "{":
            return self.row(stop="}")
        if token.startswith("\\") and len(token) > 1:
            return self.command(token[1:])
        if token[0].isdigit():
            return f"<mn>{escape(token)}</mn>"
        if token.isalpha():
            return f"<mi>{escape(token)}</mi>"
        return f"<mo>{escape(_OPERATORS.get(token, token))}</mo>"

    def command(self, name: str) -> str:
        if name == "frac":
            return f"<mfrac>{self.group()}{self.group()}</mfrac>"
        if name == "sqrt":
            return f"<msqrt>{self.group()}</msqrt>"
        if name == "left":
            return self.fenced()
        if name in _FONTS:
            text = escape(self.text_group())
            return f'<mi mathvariant="{_FONTS[name]}">{text}</mi>'
        if name in FUNCTIONS:
            return f'<mi mathvariant="normal">{name}</mi>'
        if name in GREEK:
            return f"<mi>{GREEK[name]}</mi>"
        if name in ("sum", "prod"):
            return f'<mo largeop="true" movablelimits="false">{SYMBOLS[name]}</mo>'
        if name in SYMBOLS:
            return f"<mo>{escape(SYMBOLS[name])}</mo>"
        return f"<mtext>\\{escape(name)}</mtext>"

    def fenced(self) -> str:
        """``\\left( ... \\right)``: both fences stretch to what they enclose."""
        opening = self._fence()
        items = []
        while self.peek() not in (None, r"\right"):
            items.append(self.scripts(self.atom()))
        self.take()
        return f"<mrow>{opening}{''.join(items)}{self._fence()}</mrow>"

    def _fence(self) -> str:
        token = self.take() or "."
        symbol = SYMBOLS.get(token[1:], token[1:]) if token.startswith("\\") else token
        return "" if symbol == "." else f'<mo stretchy="true">{escape(symbol)}</mo>'
