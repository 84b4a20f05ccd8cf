"""Expressions as LaTeX, for ``_repr_latex_``: ``tanh(x @ W + b)`` → ``\\tanh(x W + b)``.

Each op is written by a template taking its operands' LaTeX; precedence decides where
parentheses go. Ops without a template print as ``\\operatorname{name}(a, b)``.
Deep expressions are cut at :data:`MAX_DEPTH` with a placeholder (``\\ldots``), so a
1,000-layer chain still prints on one line; a subexpression used several times is named and
written once, so the formula stays the size of the graph.

:func:`to_infix` writes the same expression, by the same printer, as one line of plain text
with every operation bracketed (Theano's ``pp``): ``((x + y) * 2)``.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import deque

import numpy as np

from symnb.core.op import OP_REGISTRY
from symnb.core.variable import Constant
from symnb.core.words import printable
from symnb.ops.index import SYM
from symnb.viz.view import constant_text

ATOM, POWER, PRODUCT, SUM = 4, 3, 2, 1
MAX_DEPTH = 12
#: a subexpression used more than once is written again where its LaTeX is this short
SHORT = 12

# op name -> (template, precedence of the result, precedence its left and its right operand
# need). A right operand of the operator's own precedence is bracketed: ``-``, ``/``,
# ``\bmod`` and juxtaposition read left to right, so ``a - (b - c)``, ``a // (b * c)`` and
# ``a * (b % c)`` need their brackets. ``+`` takes any sum as it is (``a + b - c`` reads the
# same either way), a product the operands :data:`CHAINS` lists.
INFIX = {
    "add": ("{0} + {1}", SUM, SUM, SUM),
    "sub": ("{0} - {1}", SUM, SUM, PRODUCT),
    "mul": (r"{0} \cdot {1}", PRODUCT, PRODUCT, POWER),
    "matmul": ("{0} {1}", PRODUCT, POWER, POWER),
    "dot": (r"{0} \cdot {1}", PRODUCT, POWER, POWER),
    "floor_div": (r"\left\lfloor {0} / {1} \right\rfloor", ATOM, PRODUCT, POWER),
    "mod": (r"{0} \bmod {1}", PRODUCT, POWER, POWER),
    "less": ("{0} < {1}", 0, SUM, SUM),
    "greater": ("{0} > {1}", 0, SUM, SUM),
    "less_equal": (r"{0} \le {1}", 0, SUM, SUM),
    "greater_equal": (r"{0} \ge {1}", 0, SUM, SUM),
    "equal": ("{0} = {1}", 0, SUM, SUM),
    "not_equal": (r"{0} \ne {1}", 0, SUM, SUM),
}
#: associative operators, and the operations (by their outermost sign, None for a number
#: written as a product, ``1.5 \times 10^{-5}``) that may follow them unbracketed at their
#: own precedence: ``a \cdot b \cdot c`` whichever product is taken first, but not
#: ``a \cdot b \bmod c`` nor ``a \cdot b c`` (a matrix product)
CHAINS = {"mul": {"mul", None}}
#: products whose sign may take a unary minus: ``-a \cdot b`` whichever is negated, but
#: ``-(a \bmod b)`` is not ``(-a) \bmod b``
NEGATES_THROUGH = {"mul", "matmul", "dot", None}
#: operators written by juxtaposition, whose left operand is bracketed where its name reads
#: as a function's (``\left(\sigma\right) \left(a + b\right)``, not the sigmoid's
#: ``\sigma\left(a + b\right)``)
JUXTAPOSED = {"matmul"}

#: Greek letters by their LaTeX command (mathml.py writes them back as letters)
GREEK = {
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "epsilon": "ε",
    "eta": "η",
    "theta": "θ",
    "lambda": "λ",
    "mu": "μ",
    "pi": "π",
    "rho": "ρ",
    "sigma": "σ",
    "tau": "τ",
    "phi": "φ",
    "psi": "ψ",
    "omega": "ω",
    "Sigma": "Σ",
    "Delta": "Δ",
    "Omega": "Ω",
}
_LETTER_COMMAND = {letter: rf"\{command}" for command, letter in GREEK.items()}

FUNCTIONS = {
    "exp": r"\exp",
    "log": r"\log",
    "tanh": r"\tanh",
    "sin": r"\sin",
    "cos": r"\cos",
    "sigmoid": r"\sigma",
    "relu": r"\operatorname{relu}",
    "sign": r"\operatorname{sign}",
}


def _wrap(text: str, have: int, need: int) -> str:
    return text if have >= need else rf"\left({text}\right)"


def _name(var) -> str:
    """A leaf's name as LaTeX: ``W_hh`` is ``W_{hh}``, ``α`` is ``\\alpha``, ``x'`` keeps its
    prime; a name of several letters is upright (``\\mathrm{lr}``), and one with other
    characters is written whole in ``\\mathrm``, LaTeX's specials escaped (``a.b`` is
    ``\\mathrm{a.b}``, ``1.5`` is ``\\mathrm{1.5}``), so that the formula parses and a name
    never reads as a product of letters or as a number."""
    name = var.name or "v"
    primes = len(name) - len(name.rstrip("'"))
    base, _, sub = name.rstrip("'").partition("_")
    base = _letters(base, upright=True) or "v"
    sub = _letters(sub, upright=False)
    return (f"{base}_{{{sub}}}" if sub else base) + "'" * primes


#: how a character LaTeX reads as markup is written in ``\mathrm`` (``^`` as a wedge,
#: ``~`` as a tilde operator: math mode has no plain caret or tilde)
_ESCAPES = {
    "\\": r"\backslash ",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "%": r"\%",
    "_": r"\_",
    "^": r"\wedge ",
    "~": r"\sim ",
    " ": r"\ ",
}


def _letters(text: str, upright: bool) -> str:
    """``text`` as LaTeX: a single letter as it is (a Greek one as its command), a run of
    letters and digits in ``\\mathrm`` where it is ``upright`` or not ASCII; anything with
    other characters whole in ``\\mathrm``, escaped, and a character that would print as a
    blank or as nothing (a newline, a tab, ``\\x01``, a zero-width space) as its escape
    (``\\mathrm{a\\backslash nb}``): TeX ignores white space in a formula and refuses a blank
    line or a control character, so ``a\\nb`` would read as ``ab``. Two names then print
    alike only if their LaTeX is the same, and the formula tells those apart."""
    if not text:
        return ""
    if not re.fullmatch(r"[^\W_]+", text):
        shown = "".join(_ESCAPES.get(c, c) for c in printable(text, visible=True))
        escaped = re.sub(r"(\\[A-Za-z]+) $", r"\1", shown)
        return rf"\mathrm{{{escaped}}}"
    if text in _LETTER_COMMAND:
        return _LETTER_COMMAND[text]
    if text.isascii() and (len(text) == 1 and text.isalpha() or not upright):
        return text
    return rf"\mathrm{{{text}}}"


def _number(value) -> tuple[str, int]:
    """A scalar as LaTeX and its precedence, its value kept (the shortest text that reads
    back as the same number at its precision: ``1.0000001``, not ``1``): a number is an
    atom only when written with digits alone; with a sign (``-2``) it binds as a unary minus
    does, so ``(-2) ** x`` is ``\\left(-2\\right)^{x}``, not ``-2^{x}`` (which reads
    ``-(2^x)``); in scientific notation (``1.5 \\times 10^{-5}``, not ``1.5e-05``, which
    reads as a subtraction) or imaginary (``2\\,\\mathrm{i}``) as a product. ``True`` and
    ``False`` are words (``\\mathrm{True}``), as NaN is."""
    if isinstance(value, (bool, np.bool_)):
        return rf"\mathrm{{{bool(value)}}}", ATOM
    if isinstance(value, (complex, np.complexfloating)):
        return _complex(value)
    text = _float(value) if isinstance(value, (float, np.floating)) else str(value)
    if text.startswith("-"):
        return text, SUM
    return text, ATOM if re.fullmatch(r"[0-9.]+|\\infty|\\mathrm\{NaN\}", text) else PRODUCT


def _float(value) -> str:
    if math.isnan(value):
        return r"\mathrm{NaN}"
    if math.isinf(value):
        return r"\infty" if value > 0 else r"-\infty"
    mantissa, e, exponent = str(value).partition("e")  # NumPy's str: shortest round trip
    mantissa = mantissa.removesuffix(".0")
    return rf"{mantissa} \times 10^{{{int(exponent)}}}" if e else mantissa


def _complex(value) -> tuple[str, int]:
    """Each part as :func:`_float` writes a float of the parts' precision (a complex64's are
    float32: 0.1, not 0.10000000149011612), an imaginary part of -0.0 with its sign, as a
    float's (``0.1 - 0\\,\\mathrm{i}``); a zero real part is left out whatever its sign, as
    Python's ``-2j`` is ``complex(-0.0, -2.0)`` (``-2\\,\\mathrm{i}``)."""
    real, imag = value.real, value.imag  # (np.float32 for a complex64: str is its shortest)
    negative = bool(np.signbit(imag)) and not math.isnan(imag)
    imag_text = rf"{_float(-imag if negative else imag)}\,\mathrm{{i}}"
    if real == 0:
        return ("-" + imag_text, SUM) if negative else (imag_text, PRODUCT)
    sign = "-" if negative else "+"
    return rf"\left({_float(real)} {sign} {imag_text}\right)", ATOM


#: an array constant of at most this many elements is written by its value
SMALL_ARRAY = 4


def _constant(var: Constant) -> tuple[str, int]:
    """A constant's LaTeX and its precedence: a scalar by its value (:func:`_number`), a
    named array by its name, a small one by its value (``\\left[1, 2\\right]``); a larger
    unnamed one is numbered by :class:`_Printer`."""
    if var.weak:
        return _number(var.data)
    if var.value.size == 1:
        return _number(var.value.reshape(())[()])
    if var.name:
        return _name(var), ATOM
    return _nested(var.value), ATOM


def _nested(array) -> str:
    if array.ndim == 0:
        return _number(array[()])[0]
    return r"\left[" + ", ".join(_nested(row) for row in array) + r"\right]"


class _Printer:
    """Writes the expression computing ``root``, each node once: a subexpression used more
    than once whose LaTeX is not short is named (``t_{1}``) and defined once after the
    formula (``\\text{where}\\ t_{1} = ...``), so the formula grows with the graph, not with
    the number of paths through it (``where(h > 1, h - 1, h)`` chained uses ``h`` 3^k times).
    Nodes deeper than :data:`MAX_DEPTH` below ``root`` print as ``\\ldots``. An output of an
    op with several is written with its index (``\\operatorname{slogdet}\\left(a\\right)_{1}``).

    What is LaTeX here is in the few methods and names that :class:`_InfixPrinter` writes
    as plain text instead."""

    ELLIPSIS = r"\ldots"
    #: how the formula writes values that a name could read as (``\mathrm{True}``): an input
    #: with such a name is told apart with an index, as two inputs of one name are
    WORDS = {"True", "False", "NaN", "None", "∞"}
    #: an input's name as written, whose part before ``_`` a bound name must not have
    input_name = staticmethod(_name)

    def __init__(self, root):
        self.root = root
        self.depth, self.uses = _depths_and_uses(root)
        self.texts: dict[int, tuple[str, int]] = {}
        self.bound: dict[int, str] = {}
        self.bindings: list[str] = []
        self.letter = _free_letter(root, self.depth, self.input_name)
        self.leaves: dict[int, tuple[str, int]] = {}
        self.written: set[str] = set()  # the names leaves are written with
        self.next_twin: dict[str, int] = {}  # a name's next index to try
        self.arrays: dict[tuple, int] = {}

    def bound_name(self, k: int) -> str:
        return f"{self.letter}_{{{k}}}"

    def where(self, main: str, bindings: list[str]) -> str:
        return rf"{main} \quad \text{{where}} \quad " + r", \quad ".join(bindings)

    def leaf_text(self, var) -> tuple[str, int]:
        if not isinstance(var, Constant):
            return _name(var), ATOM
        if var.weak or var.value.size <= SMALL_ARRAY or var.name:
            return _constant(var)
        value = np.ascontiguousarray(var.value)
        key = (value.dtype.str, value.shape, hashlib.sha256(value.view(np.uint8)).digest())
        k = self.arrays.setdefault(key, len(self.arrays) + 1)
        return rf"\mathbf{{c}}_{{{k}}}", ATOM

    def twin(self, text: str, k: int) -> tuple[str, int]:
        """The ``k``-th other input whose name prints as ``text``: a superscript, so its
        precedence is a power's (``\\left({x}^{(1)}\\right)^{2}``, never ``{x}^{(1)}^{2}``)."""
        return f"{{{text}}}^{{({k})}}", POWER

    def formula(self) -> str:
        for var in _post_order(self.root, self.depth):
            latex, prec = self._apply(var)
            self.texts[id(var)] = latex, prec
            if var is not self.root and self.uses[id(var)] > 1 and len(latex) > SHORT:
                name = self.bound_name(len(self.bindings) + 1)
                self.bound[id(var)] = name
                self.bindings.append(f"{name} = {latex}")
        main = self.text(self.root)[0]
        return self.where(main, self.bindings) if self.bindings else main

    def text(self, var) -> tuple[str, int]:
        """``var`` as its parent writes it: a leaf's name, a bound name, or its LaTeX."""
        if var.owner is None:
            return self.leaf(var)
        if id(var) not in self.depth:
            return self.ELLIPSIS, ATOM
        if id(var) in self.bound:
            return self.bound[id(var)], ATOM
        return self.texts[id(var)]

    def leaf(self, var) -> tuple[str, int]:
        """An input's name, distinct from every other input's and from the words the
        formula writes values with: two variables whose names print alike (two ``x``, or
        ``x`` and ``x_``) are told apart by an index, found in time linear in the number of
        inputs; a constant's value, with its precedence (``-2`` is not an atom; constants of
        one value print alike)."""
        if id(var) not in self.leaves:
            text, prec = self.leaf_text(var)
            if not isinstance(var, Constant) or (var.name and var.value.size > 1):
                if text in self.written or _reading(text) in self.WORDS:
                    k = self.next_twin.get(text, 1)
                    while self.twin(text, k)[0] in self.written:
                        k += 1
                    self.next_twin[text] = k + 1
                    text, twin_prec = self.twin(text, k)
                    prec = min(prec, twin_prec)
                self.written.add(text)
            self.leaves[id(var)] = text, prec
        return self.leaves[id(var)]

    def _apply(self, var) -> tuple[str, int]:
        node = var.owner
        text, prec = self._write(node)
        if len(node.outputs) > 1:
            return self.output(text, prec, var.index), ATOM
        return text, prec

    def output(self, text: str, prec: int, k: int) -> str:
        """Output ``k`` of an op that has several."""
        return f"{_wrap(text, prec, ATOM)}_{{{k}}}"

    def _write(self, node) -> tuple[str, int]:
        name = node.op.op_name()
        args = [self.text(v) for v in node.inputs]
        writer = WRITERS.get(name)
        if writer is not None:
            return writer(node, args)
        if name in INFIX and len(args) == 2:
            template, prec, need, right_need = INFIX[name]
            if _outermost(node.inputs[1]) in CHAINS.get(name, ()):
                right_need = need
            left = _wrap(*args[0], need)
            if name in JUXTAPOSED and node.inputs[0].owner is None and _reads_as_function(left):
                left = rf"\left({left}\right)"  # a matrix named σ, not σ's sigmoid
            return template.format(left, _wrap(*args[1], right_need)), prec
        if name in FUNCTIONS and len(args) == 1:
            return rf"{FUNCTIONS[name]}\left({args[0][0]}\right)", ATOM
        inner = ", ".join(a for a, _ in args)
        return rf"\operatorname{{{_escape(name)}}}\left({inner}\right)", ATOM


def _reading(latex: str) -> str:
    """A name or function as it reads: ``\\mathrm{relu}`` and ``\\operatorname{relu}`` as
    ``relu``, ``\\sigma`` as ``sigma``."""
    match = re.fullmatch(r"\\(?:mathrm|operatorname)\{(.*)\}|\\([A-Za-z]+)\s*", latex)
    return next((g for g in match.groups() if g is not None), latex) if match else latex


def _reads_as_function(latex: str) -> bool:
    """Whether a name reads as an op's or function's name (``\\sigma``, ``\\mathrm{relu}``,
    ``\\mathrm{int32}``), which written before its operand would read as applied to it."""
    reading = _reading(latex)
    if reading in OP_REGISTRY or reading in {_reading(f) for f in FUNCTIONS.values()}:
        return True
    try:  # a cast's name
        return np.dtype(reading).name == reading
    except (TypeError, ValueError):
        return False


def _outermost(var):
    """The op whose sign is outermost in ``var``'s LaTeX (None for a leaf): a cast that is
    not written is seen through."""
    while var.owner is not None and var.owner.op.op_name() == "cast" and not _shows(var.owner):
        var = var.owner.inputs[0]
    return None if var.owner is None else var.owner.op.op_name()


def _depths_and_uses(root) -> tuple[dict[int, int], dict[int, int]]:
    """Each computed variable within :data:`MAX_DEPTH` of ``root``: its least depth, and how
    many times the nodes written use it (breadth first, so a depth is the least)."""
    depth, uses = {}, {}
    if root.owner is None:
        return depth, uses
    depth[id(root)] = 0
    queue = deque([root])
    while queue:
        var = queue.popleft()
        for inp in var.owner.inputs:
            uses[id(inp)] = uses.get(id(inp), 0) + 1
            if inp.owner is not None and id(inp) not in depth and depth[id(var)] + 1 < MAX_DEPTH:
                depth[id(inp)] = depth[id(var)] + 1
                queue.append(inp)
    return depth, uses


def _post_order(root, depth: dict[int, int]) -> list:
    """The variables written, each after those it uses (no recursion: chains may be long)."""
    order, seen = [], set()
    stack = [(root, False)] if id(root) in depth else []
    while stack:
        var, done = stack.pop()
        if done:
            order.append(var)
            continue
        if id(var) in seen:
            continue
        seen.add(id(var))
        stack.append((var, True))
        for inp in reversed(var.owner.inputs):
            if id(inp) in depth and id(inp) not in seen:
                stack.append((inp, False))
    return order


def _free_letter(root, depth: dict[int, int], name_of) -> str:
    """The letter of the bound names: one no input of the formula is written with."""
    taken = {
        name_of(inp).partition("_")[0]
        for var in _post_order(root, depth)
        for inp in var.owner.inputs
        if inp.owner is None
    }
    return next((c for c in "tsuvrq" if c not in taken), r"\tau")


def _escape(name: str) -> str:
    return name.replace("_", r"\_")


def _true_div(node, args):
    return rf"\frac{{{args[0][0]}}}{{{args[1][0]}}}", ATOM


def _pow(node, args):
    return f"{_wrap(*args[0], ATOM)}^{{{args[1][0]}}}", POWER


def _neg(node, args):
    need = PRODUCT if _outermost(node.inputs[0]) in NEGATES_THROUGH else POWER
    return f"-{_wrap(*args[0], need)}", SUM


def _sqrt(node, args):
    return rf"\sqrt{{{args[0][0]}}}", ATOM


def _abs(node, args):
    return rf"\left|{args[0][0]}\right|", ATOM


def _reduction(symbol):
    """``\\sum_{0} x``: its operand runs to the end of a product (``\\sum_{0} x \\cdot y``
    reads ``sum(x * y)``), so the reduction is bracketed as a factor, as a sum would be
    (``\\left(\\sum_{0} x\\right) \\cdot y``), and a product operand is bracketed too."""

    def write(node, args):
        axis = getattr(node.op, "axis", None)
        sub = "" if axis is None else ",".join(str(a) for a in axis)
        return rf"{symbol}_{{{sub}}} {_wrap(*args[0], POWER)}", SUM

    return write


def _transpose(node, args):
    """``x^{\\top}``: ``x^{T}`` would read as ``x`` to the power of a variable ``T``."""
    return f"{_wrap(*args[0], ATOM)}^{{\\top}}", POWER


def _shows(node) -> bool:
    """Whether a cast is written: one that may change a value (to an integer or bool from a
    float, to a narrower type: not "safe" to NumPy) is, as ``\\operatorname{int32}``; a
    widening one (``float32`` to ``float64``, bool or an integer to a float or a wider
    integer) is not, as it keeps the value (an int64 above 2**53 to float64 aside)."""
    return not np.can_cast(node.inputs[0].type.dtype, node.op.dtype, "safe")


def _cast(node, args):
    if _shows(node):
        return rf"\operatorname{{{node.op.dtype}}}\left({args[0][0]}\right)", ATOM
    return args[0]


def _dim_shuffle(node, args):
    """A 2-D transpose prints as ``^{\\top}``; other axis shuffles by name."""
    if _is_transpose(node):
        return _transpose(node, args)
    return rf"\operatorname{{dimshuffle}}\left({args[0][0]}\right)", ATOM


def _subtensor(node, args):
    """``x[spec]``: the index as written, its symbolic parts by their LaTeX."""
    return _indexed(node.op.spec, _wrap(*args[0], ATOM), [a for a, _ in args[1:]]), ATOM


def _inc_subtensor(node, args):
    """``set_subtensor(x[spec], v)`` or ``inc_subtensor(...)``: one op class does both, so
    the name comes from ``set_instead``, not from the class."""
    name = "set_subtensor" if node.op.set_instead else "inc_subtensor"
    target = _indexed(node.op.spec, _wrap(*args[0], ATOM), [a for a, _ in args[2:]])
    return rf"\operatorname{{{_escape(name)}}}\left({target}, {args[1][0]}\right)", ATOM


#: how an index is written: its brackets, and ``None`` and ``...`` in it
LATEX_INDEX = (r"\left[", r"\right]", {"new": r"\mathrm{None}", "...": r"\dots"})
PLAIN_INDEX = ("[", "]", {"new": "None", "...": "..."})


def _indexed(spec, x: str, index: list[str], spelling=LATEX_INDEX) -> str:
    """``x`` indexed by ``spec``, its symbolic parts written ``index`` in order."""
    opening, closing, words = spelling
    feed = iter(index)
    items = [_index_item(entry, feed, words) for entry in spec]
    return f"{x}{opening}{', '.join(items)}{closing}"


def _index_item(entry, feed, words) -> str:
    kind = entry[0]
    if kind == "slice":
        start, stop, step = (_bound(b, feed) for b in entry[1:])
        return f"{start}:{stop}" + (f":{step}" if entry[3] is not None else "")
    if kind == "int":
        return _bound(entry[1], feed)
    if kind in ("array", "mask"):
        return next(feed)
    return words[kind]


def _bound(value, feed) -> str:
    return next(feed) if value == SYM else "" if value is None else str(value)


WRITERS = {
    "subtensor": _subtensor,
    "advanced_subtensor": _subtensor,
    "inc_subtensor": _inc_subtensor,
    "true_div": _true_div,
    "pow": _pow,
    "neg": _neg,
    "sqrt": _sqrt,
    "abs": _abs,
    "sum": _reduction(r"\sum"),
    "mean": _reduction(r"\operatorname{mean}"),
    "max": _reduction(r"\max"),
    "min": _reduction(r"\min"),
    "cast": _cast,
    "dim_shuffle": _dim_shuffle,
}


def _is_transpose(node) -> bool:
    order = getattr(node.op, "order", None)
    return node.op.op_name() == "dim_shuffle" and order is not None and list(order) == [1, 0]


def to_latex(var) -> str:
    """The LaTeX of the expression computing ``var`` (without ``$`` delimiters)."""
    return _Printer(var).formula()


#: operators written between their operands by :func:`to_infix`, as Python writes them
OPERATORS = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "true_div": "/",
    "floor_div": "//",
    "mod": "%",
    "pow": "**",
    "matmul": "@",
    "less": "<",
    "greater": ">",
    "less_equal": "<=",
    "greater_equal": ">=",
    "equal": "==",
    "not_equal": "!=",
}


class _InfixPrinter(_Printer):
    """The expression as one line of plain text, every operation in brackets (so no
    precedence is needed), as Theano's ``pp`` wrote it: ``((x + y) * 2)``, ``(-x)``,
    ``x[1:k]``, ``x.T``; other ops by their name and parameters, as the text form writes
    them (``sum[axis=(0,), keepdims=False](x)``); a constant by its value (a negative one
    in brackets, ``((-2) ** x)``), an unnamed input by its type (``<f64[?]>``)."""

    ELLIPSIS = "..."
    WORDS = {"True", "False", "None", "nan", "inf"}
    input_name = staticmethod(str)

    def bound_name(self, k: int) -> str:
        return f"{self.letter}_{k}"

    def where(self, main: str, bindings: list[str]) -> str:
        return f"{main} where " + ", ".join(bindings)

    def leaf_text(self, var) -> tuple[str, int]:
        if not isinstance(var, Constant):
            return str(var), ATOM
        text = constant_text(var)
        return text, SUM if text.startswith("-") else ATOM

    def twin(self, text: str, k: int) -> tuple[str, int]:
        return f"{text}_{k}", ATOM

    def output(self, text: str, prec: int, k: int) -> str:
        return f"{text}[{k}]"  # as Python indexes what such an op returns

    def _write(self, node) -> tuple[str, int]:
        name = node.op.op_name()
        args = [text if prec >= ATOM else f"({text})" for text, prec in map(self.text, node.inputs)]
        if name in OPERATORS and len(args) == 2:
            return f"({args[0]} {OPERATORS[name]} {args[1]})", ATOM
        if name == "neg":
            return f"(-{args[0]})", ATOM
        if name in ("subtensor", "advanced_subtensor"):
            return _indexed(node.op.spec, args[0], args[1:], PLAIN_INDEX), ATOM
        if name == "inc_subtensor":
            target = _indexed(node.op.spec, args[0], args[2:], PLAIN_INDEX)
            what = "set_subtensor" if node.op.set_instead else "inc_subtensor"
            return f"{what}({target}, {args[1]})", ATOM
        if _is_transpose(node):
            return f"{args[0]}.T", ATOM
        return f"{node.op}({', '.join(args)})", ATOM


def to_infix(var) -> str:
    """The expression computing ``var`` on one line of plain text, every operation
    bracketed: ``((x + y) * 2)`` (Theano's ``pp``). Long and shared parts are treated as in
    :func:`to_latex`: cut at ``...``, or named once (``... where t_1 = ...``)."""
    return _InfixPrinter(var).formula()
