"""Rich reprs, LaTeX, profiles and charts, without a kernel."""

import re
from xml.etree import ElementTree

import numpy as np
import pytest

import symnb as sn
from symnb.viz.charts import bar_chart_svg, plot_bars, plot_line, plot_lines, show_images
from symnb.viz.graphs import picture
from symnb.viz.latex import to_infix, to_latex
from symnb.viz.mathml import to_mathml
from symnb.viz.samples import sample_inputs
from tests.helpers import needs_c

pytest.importorskip("pygraphviz")


def test_variable_bundle_has_card_latex_and_text():
    x = sn.tensor("x", shape=("batch", 3), dtype="float32")
    W = sn.shared(np.ones((3, 2), "float32"), name="W")
    y = sn.tanh(x @ W)
    bundle = y._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", "text/latex"}
    assert "<svg" in bundle["text/html"] and "batch" in bundle["text/html"]
    assert bundle["text/latex"] == r"$\tanh\left(x W\right)$"
    assert bundle["text/plain"].startswith("Variable:f32[batch,2]\ninputs: x:f32[batch,3]")
    leaf = x._repr_mimebundle_(include={"text/plain"})
    assert leaf == {"text/plain": "x:f32[batch,3]"}


@pytest.mark.parametrize(
    "build, expected",
    [
        (lambda x, y: x + y * 2.0, r"x + y \cdot 2"),
        (lambda x, y: (x + y) * 2.0, r"\left(x + y\right) \cdot 2"),
        (lambda x, y: x / sn.sqrt(y), r"\frac{x}{\sqrt{y}}"),
        (lambda x, y: x - (y - x), r"x - \left(y - x\right)"),
        (lambda x, y: sn.exp(-x) ** 2, r"\exp\left(-x\right)^{2}"),
        (lambda x, y: sn.sum(x * y, axis=0), r"\sum_{0} \left(x \cdot y\right)"),
    ],
)
def test_latex_of_expressions(build, expected):
    x, y = sn.vector("x"), sn.vector("y")
    assert to_latex(build(x, y)) == expected


@pytest.mark.parametrize(
    "build, expected",
    [
        (lambda x, y: sn.constant(-2.0) ** x, r"\left(-2\right)^{x}"),
        (lambda x, y: x - sn.constant(-2.0), r"x - \left(-2\right)"),
        (lambda x, y: x * -3.0, r"x \cdot \left(-3\right)"),
        (lambda x, y: sn.constant(-1) * x + 1, r"\left(-1\right) \cdot x + 1"),
        (lambda x, y: x * 1.5e-5, r"x \cdot 1.5 \times 10^{-5}"),
        (lambda x, y: sn.constant(1e-5) ** x, r"\left(1 \times 10^{-5}\right)^{x}"),
        (lambda x, y: sn.sum(x) * y, r"\left(\sum_{0} x\right) \cdot y"),
        (lambda x, y: y * sn.max(x), r"y \cdot \left(\max_{0} x\right)"),
        (lambda x, y: sn.sum(x) + y, r"\sum_{0} x + y"),
        (lambda x, y: -sn.mean(x), r"-\left(\operatorname{mean}_{0} x\right)"),
        (lambda x, y: x * np.inf, r"x \cdot \infty"),
        (lambda x, y: x**-np.inf, r"x^{-\infty}"),
        (lambda x, y: sn.maximum(x, -np.inf), r"\operatorname{maximum}\left(x, -\infty\right)"),
        (lambda x, y: x + np.nan, r"x + \mathrm{NaN}"),
    ],
)
def test_latex_brackets_signed_constants_and_reductions_as_factors(build, expected):
    """``(-2) ** x`` is 4 at x = 2, but was written ``-2^{x}`` (``-(2^x)``, -4), ``x - -2``
    and ``x \\cdot -3``; ``sum(x) * y`` was ``\\sum_{0} x \\cdot y``, which reads
    ``sum(x * y)``; ``1e-05`` read as a subtraction; infinity and NaN were ``inf``, ``nan``."""
    x, y = sn.vector("x"), sn.vector("y")
    assert to_latex(build(x, y)) == expected


@pytest.mark.parametrize(
    "build, expected",
    [
        (lambda x, y: (x + y) * 2.0, "((x + y) * 2.0)"),
        (lambda x, y: x - (y - x) / y, "(x - ((y - x) / y))"),
        (lambda x, y: (-x) ** 2 + -(x**2), "(((-x) ** 2) + (-(x ** 2)))"),
        (lambda x, y: sn.constant(-2.0) ** x, "((-2.0) ** x)"),
        (lambda x, y: sn.sum(x) * y, "(sum[axis=(0,), keepdims=False](x) * y)"),
        (lambda x, y: sn.set_subtensor(x[1:], y[0]), "set_subtensor(x[1:], y[0])"),
        (lambda x, y: sn.cast(x > 0, "int8"), "cast[dtype='int8']((x > 0))"),
        (lambda x, y: sn.exp(x + y) * sn.exp(x + y) + x, "((exp((x + y)) * exp((x + y))) + x)"),
    ],
)
def test_infix_is_the_formula_on_one_line_every_operation_bracketed(build, expected):
    """Theano's ``pp`` form, written by the LaTeX printer with plain spellings."""
    x, y = sn.vector("x"), sn.vector("y")
    assert to_infix(build(x, y)) == expected


def test_infix_and_box_labels_write_constants_as_their_values_round_trip():
    """Arrays of 2 to 4 elements were written by ``np.array2string`` at 8 digits, so
    ``x + [1.0, 0.1234567890123]`` read ``[1.,0.12345679]`` in ``pp`` and in the box's label;
    each element is now the shortest text that reads back as it, in its dtype."""
    x = sn.vector("x")
    pair = sn.constant(np.array([1.0, 0.1234567890123]))
    assert to_infix(x + pair) == "(x + [1.0,0.1234567890123])"
    assert to_infix(x * sn.constant(np.float32(0.1))) == "(x * 0.1)"  # not 0.10000000149...
    labels = [n.label for n in picture(x * np.array([1.0000000001, 2.0])).view.nodes.values()]
    assert "[1.0000000001,2.0]" in labels


def test_infix_tells_apart_constants_of_more_than_four_elements():
    """Every unnamed constant of more than 4 elements was ``const``, so ``(a + C1) - C2``
    read ``((a + const) - const)``; docs/theano.md says ``pp`` writes constants by value.
    Such a constant is now its type and values (its first and last two when longer than 5),
    or its one value, and a named one its name."""
    a = sn.vector("a")
    c1 = sn.constant(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    c2 = sn.constant(np.array([0.0, 0.0, 0.0, 0.0, 1.0]))
    assert to_infix((a + c1) - c2) == (
        "((a + <f64[5]: 1.0,2.0,3.0,4.0,5.0>) - <f64[5]: 0.0,0.0,0.0,0.0,1.0>)"
    )
    long = sn.constant(np.arange(1000, dtype="float32").reshape(10, 100))
    zeros = sn.constant(np.zeros((3, 3), "int64"))
    assert to_infix(a + long) == "(a + <f32[10,100]: 0.0,1.0,...,998.0,999.0>)"
    assert to_infix(zeros * a) == "(<i64[3,3]: all 0> * a)"
    signed = sn.constant(np.array([0.0, 0.0, -0.0, 0.0, 0.0]))  # -0.0 is not 0.0 everywhere
    assert to_infix(a - signed) == "(a - <f64[5]: 0.0,0.0,-0.0,0.0,0.0>)"
    assert to_infix(a + sn.constant(np.arange(9.0), name="b")) == "(a + b)"


def test_infix_names_a_long_shared_part_once_and_cuts_deep_ones():
    x, y = sn.vector("x"), sn.vector("y")
    h = sn.tanh(x * y + 1.0)
    assert to_infix(h * h) == "(t_1 * t_1) where t_1 = tanh(((x * y) + 1.0))"
    deep = x
    for _ in range(20):
        deep = sn.sin(deep)
    assert to_infix(deep) == "sin(" * 12 + "..." + ")" * 12


def test_the_cards_mathml_writes_a_negative_base_in_brackets():
    x = sn.vector("x")
    power = sn.constant(-2.0) ** x
    assert sn.function([x], power, backend="py")(np.array([2.0]))[0] == 4.0
    base = '<mo stretchy="true">(</mo><mo>−</mo><mn>2</mn><mo stretchy="true">)</mo>'
    assert f"<msup><mrow>{base}</mrow><mrow><mi>x</mi></mrow></msup>" in power._repr_html_()


@pytest.mark.parametrize(
    "build, expected",
    [
        (lambda x, i, k: x[::2], r"x\left[::2\right]"),
        (
            lambda x, i, k: (x + 1)[k:, None, i],
            r"\left(x + 1\right)\left[k:, \mathrm{None}, i\right]",
        ),
        (lambda x, i, k: x[x > 0], r"x\left[x > 0\right]"),
        (
            lambda x, i, k: sn.set_subtensor(x, i, 1.0),
            r"\operatorname{set\_subtensor}\left(x\left[i\right], 1\right)",
        ),
        (
            lambda x, i, k: sn.inc_subtensor(x[1:k, 0], 2.0),
            r"\operatorname{inc\_subtensor}\left(x\left[1:k, 0\right], 2\right)",
        ),
    ],
)
def test_latex_of_indexing_shows_the_index_and_set_or_inc(build, expected):
    """One op class both sets and increments: the LaTeX names what the node does."""
    x = sn.tensor("x", shape=(3, 4))
    i, k = sn.tensor("i", shape=(None,), dtype="int64"), sn.scalar("k", dtype="int64")
    assert to_latex(build(x, i, k)) == expected


def test_latex_names_keep_letters_primes_and_stay_distinct():
    """Every non-ASCII name printed as v (alpha * beta + alpha was v * v + v), a prime was
    dropped and a brace in a name unbalanced the formula."""
    a, b = sn.scalar("α"), sn.scalar("β")
    assert to_latex(a * b + a) == r"\alpha \cdot \beta + \alpha"
    assert to_latex(sn.scalar("x'") - sn.scalar("x")) == "x' - x"
    assert to_latex(sn.scalar("lr_α") * sn.scalar("é")) == r"\mathrm{lr}_{\alpha} \cdot \mathrm{é}"
    odd = to_latex(sn.scalar("x_{") + sn.scalar("$y^%#&~\\") + 1)  # LaTeX's specials escaped
    assert odd == r"x_{\mathrm{\{}} + \mathrm{\$y\wedge \%\#\&\sim \backslash} + 1"
    same = to_latex(sn.scalar("α") * sn.scalar("α") + sn.scalar("x") * sn.scalar("x"))
    assert same == r"\alpha \cdot {\alpha}^{(1)} + x \cdot {x}^{(1)}"
    for latex in (odd, same, to_latex(sn.scalar("x_{1}'") + 1)):
        mathml = sn.viz.mathml.to_mathml(latex)
        ElementTree.fromstring(mathml)  # parses as MathML
        assert "<mtext>" not in mathml  # every command known
    assert "".join(ElementTree.fromstring(sn.viz.mathml.to_mathml(odd)).itertext()) == (
        "x{+$y∧%#&∼\\+1"
    )


def test_the_cards_mathml_knows_every_dots():
    """``a[idx, ..., idx]`` is written with ``\\dots``, which the MathML showed as its text."""
    a = sn.tensor("a", shape=(3, 3), dtype="float64")
    latex = to_latex(a[np.array([0, 1]), ..., np.array([0, 1])])
    assert r", \dots, " in latex
    mathml = to_mathml(latex)
    assert "<mo>…</mo>" in mathml and "<mtext>" not in mathml


@pytest.mark.parametrize(
    "build, expected",
    [
        (lambda a, b, c: a // (b * c), r"\left\lfloor a / \left(b \cdot c\right) \right\rfloor"),
        (
            lambda a, b, c: a // (b * 1e-5),
            r"\left\lfloor a / \left(b \cdot 1 \times 10^{-5}\right) \right\rfloor",
        ),
        (lambda a, b, c: a // b * c, r"\left\lfloor a / b \right\rfloor \cdot c"),
        (lambda a, b, c: a * (b % c), r"a \cdot \left(b \bmod c\right)"),
        (lambda a, b, c: a * b % c, r"\left(a \cdot b\right) \bmod c"),
        (lambda a, b, c: -(a % b), r"-\left(a \bmod b\right)"),
        (lambda a, b, c: a * (b * c) * 1e-5, r"a \cdot b \cdot c \cdot 1 \times 10^{-5}"),
        (lambda a, b, c: -(a * b), r"-a \cdot b"),
        (lambda a, b, c: a - (b - c) + (b - c), r"a - \left(b - c\right) + b - c"),
    ],
)
def test_latex_brackets_a_right_operand_that_would_read_left_to_right(build, expected):
    """``/``, ``\\bmod`` and a product's juxtaposition read left to right: ``a // (b * c)``
    was ``\\lfloor a / b \\cdot c \\rfloor`` (floor(a / b * c): 10 for 7, 2, 3, not 1),
    ``a * (b % c)`` was ``a \\cdot b \\bmod c`` and ``-(a % b)`` was ``-a \\bmod b``."""
    a, b, c = (sn.scalar(n) for n in "abc")
    assert to_latex(build(a, b, c)) == expected


def test_latex_brackets_a_matrix_product_as_a_right_factor():
    """``a * (B @ C)`` was ``a \\cdot B C``, which reads ``(a * B) @ C``."""
    a, B, C = sn.vector("a"), sn.matrix("B"), sn.matrix("C")
    assert to_latex(a * (B @ C)) == r"a \cdot \left(B C\right)"
    assert to_latex(-(B @ C)) == "-B C"


def test_latex_and_infix_say_which_output_of_a_multi_output_op():
    """Every output of a node printed alike: ``p - q`` of a split read ``X - X``."""
    a = sn.tensor("a", shape=(4, 4), dtype="float64")
    p, q = sn.split(a, 2, axis=0)
    sign, logdet = sn.slogdet(a)
    u, _, vh = sn.svd(a)
    assert to_latex(p - q) == (
        r"\operatorname{split}\left(a, t_{1}\right)_{0} - "
        r"\operatorname{split}\left(a, t_{1}\right)_{1} \quad \text{where} \quad "
        r"t_{1} = \operatorname{split\_sizes}\left(a\right)"
    )
    assert to_latex(sign * logdet) == (
        r"\operatorname{slogdet}\left(a\right)_{0} \cdot \operatorname{slogdet}\left(a\right)_{1}"
    )
    assert to_infix(sign * logdet) == "(slogdet(a)[0] * slogdet(a)[1])"
    assert to_infix(u) == "svd[full_matrices=True](a)[0]"
    assert to_infix(vh) == "svd[full_matrices=True](a)[2]"
    assert "<msub>" in to_mathml(to_latex(logdet))


def test_a_twins_mark_is_a_superscript_a_power_brackets():
    """``{x}^{(1)}^{2}``: TeX's "double superscript", and the MathML kept only the ``2``."""
    x0, x1 = sn.matrix("x"), sn.matrix("x")
    assert to_latex(x0 * 2 + x1**2) == r"x \cdot 2 + \left({x}^{(1)}\right)^{2}"
    assert to_latex(x0[0] + x1[0]) == r"x\left[0\right] + \left({x}^{(1)}\right)\left[0\right]"
    twin = "<msup><mrow><mi>x</mi></mrow><mrow><mo>(</mo><mn>1</mn><mo>)</mo></mrow></msup>"
    assert f"{twin}<mo stretchy" in to_mathml(to_latex(x0 * 2 + x1**2))


def test_mathml_applies_a_second_script_to_what_the_first_made():
    """A second superscript replaced the first: ``{x}^{(1)}^{T}`` showed ``x^T``."""
    twin = "<msup><mrow><mi>x</mi></mrow><mrow><mo>(</mo><mn>1</mn><mo>)</mo></mrow></msup>"
    assert f"<msup>{twin}<mrow><mn>2</mn></mrow></msup>" in to_mathml(r"{x}^{(1)}^{2}")
    assert "<msub><msub><mi>a</mi><mi>i</mi></msub><mi>j</mi></msub>" in to_mathml("a_i_j")


@pytest.mark.parametrize(
    "value, expected",
    [
        (1.0000001, r"x \cdot 1.0000001"),
        (1234567.0, r"x \cdot 1234567"),
        (0.1234567890123, r"x \cdot 0.1234567890123"),
        (2.5e-7, r"x \cdot 2.5 \times 10^{-7}"),
        (1.0000001e20, r"x \cdot 1.0000001 \times 10^{20}"),
        (np.float32(0.1), r"x \cdot 0.1"),  # float32's shortest, not 0.10000000149011612
        (True, r"x \cdot \mathrm{True}"),
        (2j, r"x \cdot 2\,\mathrm{i}"),
        (1 - 2.5j, r"x \cdot \left(1 - 2.5\,\mathrm{i}\right)"),
        (-2j, r"x \cdot \left(-2\,\mathrm{i}\right)"),
        # complex64's parts at float32's shortest, not 0.10000000149011612 + 0.2000000029...
        (np.complex64(0.1 + 0.2j), r"x \cdot \left(0.1 + 0.2\,\mathrm{i}\right)"),
        (complex(0.1, -0.0), r"x \cdot \left(0.1 - 0\,\mathrm{i}\right)"),  # -0.0 kept
        (complex(0.0, -0.0), r"x \cdot \left(-0\,\mathrm{i}\right)"),
    ],
)
def test_latex_writes_a_constant_by_its_exact_value(value, expected):
    """Constants were written with 6 digits (``x * 1.0000001`` printed ``x \\cdot 1``), ``True``
    as the letters T, r, u, e and ``2j`` as 2 times a variable j."""
    x = sn.scalar("x", dtype="complex128" if isinstance(value, complex) else "float32")
    assert (
        to_latex(x * sn.constant(value) if isinstance(value, np.generic) else x * value) == expected
    )


def test_the_cards_mathml_writes_true_as_a_word():
    x = sn.vector("x")
    mathml = to_mathml(to_latex(x * True))
    assert '<mi mathvariant="normal">True</mi>' in mathml and "<mi>T</mi>" not in mathml


def test_latex_tells_array_constants_apart():
    """Every unnamed array constant was ``\\mathbf{c}``: ``C1 - C2 + a`` read ``a``."""
    a = sn.vector("a")
    small = (sn.constant(np.array([1.0, 2.0, 3.0])) - sn.constant(np.array([0.0, 0.0, 1.5]))) + a
    assert to_latex(small) == r"\left[1, 2, 3\right] - \left[0, 0, 1.5\right] + a"
    grid = sn.constant(np.array([[1, -2], [3, 4]])) * sn.matrix("m")
    assert to_latex(grid) == r"\left[\left[1, -2\right], \left[3, 4\right]\right] \cdot m"
    big, other = sn.constant(np.arange(10.0)), sn.constant(np.ones(10))
    same_value = sn.constant(np.arange(10.0))
    assert to_latex(big - other + same_value + a) == (
        r"\mathbf{c}_{1} - \mathbf{c}_{2} + \mathbf{c}_{1} + a"
    )
    assert '<msub><mi mathvariant="bold">c</mi>' in to_mathml(to_latex(big - other))


@pytest.mark.parametrize(
    "build, expected",
    [
        (
            lambda a, b, x: (a / b).astype("int32") * 2,
            r"\operatorname{int32}\left(\frac{a}{b}\right) \cdot 2",
        ),
        (lambda a, b, x: x.astype(bool) * a, r"\operatorname{bool}\left(x\right) \cdot a"),
        (lambda a, b, x: a.astype("float32") + 1, r"\operatorname{float32}\left(a\right) + 1"),
        (
            lambda a, b, x: a * (x * b).astype("float32"),
            r"a \cdot \operatorname{float32}\left(x \cdot b\right)",
        ),
        (lambda a, b, x: x.astype("float64") * a, r"x \cdot a"),  # keeps every value
        (lambda a, b, x: a * (x * x).astype("float64"), r"a \cdot x \cdot x"),
        (lambda a, b, x: a * (x % x).astype("float64"), r"a \cdot \left(x \bmod x\right)"),
    ],
)
def test_latex_writes_a_cast_that_may_change_a_value(build, expected):
    """``(a / b).astype("int32") * 2`` was ``\\frac{a}{b} \\cdot 2``: 1 at a=1, b=2, where the
    graph computes 0."""
    a, b = sn.scalar("a", dtype="float64"), sn.scalar("b", dtype="float64")
    x = sn.scalar("x", dtype="float32")
    assert to_latex(build(a, b, x)) == expected


@pytest.mark.parametrize(
    "name, expected",
    [
        ("a.b", r"\mathrm{a.b}"),
        ("a b", r"\mathrm{a\ b}"),
        ("a^b", r"\mathrm{a\wedge b}"),
        ("a-b", r"\mathrm{a-b}"),
        ("1.5", r"\mathrm{1.5}"),
        ("2", r"\mathrm{2}"),
        ("w_1.5", r"w_{\mathrm{1.5}}"),
        ("αβ", r"\mathrm{αβ}"),
    ],
)
def test_latex_writes_a_name_with_other_characters_whole(name, expected):
    """``a.b`` printed ``ab``, as ``a @ b`` does, and ``1.5`` printed ``15``."""
    assert to_latex(sn.matrix(name) + 1) == f"{expected} + 1"


def test_latex_writes_blank_and_control_characters_in_a_name_as_escapes():
    """A newline, tab or control character in a name went raw into the LaTeX: ``ab`` and
    ``a\\nb`` both read ``ab`` (TeX and the card's MathML drop white space), a blank line
    ended the formula's paragraph (TeX refuses it) and ``\\x01`` went raw into the MathML.
    They are written as their escapes, as the graph drawings write them; a typed backslash
    that prints alike is told apart as any twin is."""
    cases = {
        "a\nb": r"\mathrm{a\backslash nb}",
        "a\n\nb": r"\mathrm{a\backslash n\backslash nb}",
        "a\tb": r"\mathrm{a\backslash tb}",
        "a\x01b": r"\mathrm{a\backslash x01b}",
        "a\u200bb": r"\mathrm{a\backslash u200bb}",
        "a\xa0b": r"\mathrm{a\backslash xa0b}",
        "w_\n": r"w_{\mathrm{\backslash n}}",
    }
    MI = "{http://www.w3.org/1998/Math/MathML}mi"
    for name, expected in cases.items():
        latex = to_latex(sn.scalar("ab") + sn.scalar(name))
        assert latex == rf"\mathrm{{ab}} + {expected}"
        assert not re.search(r"[^\S ]|[\x00-\x1f\x7f]", latex)
        mathml = to_mathml(latex)
        assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", mathml)
        shown = ["".join(e.itertext()) for e in ElementTree.fromstring(mathml).iter(MI)]
        assert shown[0] == "ab" and shown[-1] not in ("ab", "b")  # the two read apart
    mathml = to_mathml(to_latex(sn.scalar("ab") + sn.scalar("a\nb")))
    assert "".join(ElementTree.fromstring(mathml).itertext()) == "ab+a\\nb"
    typed = to_latex(sn.scalar("a\\nb") + sn.scalar("a\nb"))
    assert typed == r"\mathrm{a\backslash nb} + {\mathrm{a\backslash nb}}^{(1)}"


def test_latex_tells_names_apart_from_the_notation():
    """``x ** T`` and ``x.T`` both printed ``x^{T}``; a matrix named σ times ``(a + b)``
    printed as ``sigmoid(a + b)``; an input named True as the constant."""
    x, T, a, b = sn.matrix("x"), sn.scalar("T"), sn.matrix("a"), sn.matrix("b")
    assert to_latex(x**T) == "x^{T}"
    assert to_latex(x.T) == r"x^{\top}"
    assert to_latex(sn.matrix("σ") @ (a + b)) == r"\left(\sigma\right) \left(a + b\right)"
    assert to_latex(sn.sigmoid(a + b)) == r"\sigma\left(a + b\right)"
    assert to_latex(sn.matrix("relu") @ (a + b)) == r"\left(\mathrm{relu}\right) \left(a + b\right)"
    assert to_latex(sn.matrix("σ") @ a + sn.matrix("f") @ (a + b)) == (
        r"\left(\sigma\right) a + f \left(a + b\right)"
    )
    assert to_latex(sn.scalar("True") * x) == r"{\mathrm{True}}^{(1)} \cdot x"
    assert to_infix(sn.scalar("True") * x) == "(True_1 * x)"
    assert to_mathml(r"x^{\top}").count("⊤") == 1


def test_function_card_counts_nodes_before_and_after():
    x = sn.tensor("x", shape=(3,))
    f = sn.function([x], sn.exp(x) * 1.0, backend="py", name="f")
    bundle = f._repr_mimebundle_()
    assert f"nodes {len(f.graph_before)} → {len(f.graph)}" in bundle["text/html"]
    assert "backend py" in bundle["text/html"] and "kernels —" in bundle["text/html"]
    assert bundle["text/plain"].startswith("f(x:f64[3]) -> f64[3]")


@needs_c
def test_a_planned_numpy_step_is_not_called_a_fallback():
    """Backend c's profile: a plan's own NumPy step (a convolution's padded planes) is
    "NumPy", its kernels "generated C on the CPU"."""
    x, w = sn.tensor("x", (2, 3, 6, 6)), sn.tensor("w", (4, 3, 3, 3))
    f = sn.function([x, w], sn.conv2d(x, w, padding="same"), backend="c")
    profile = f.profile(np.ones((2, 3, 6, 6)), np.ones((4, 3, 3, 3)), repeat=2)
    places = {r.where for r in profile.rows}
    assert {"NumPy", "generated C on the CPU"} <= places and "NumPy fallback" not in places
    assert "× NumPy" in profile.text() and "fallback" not in profile.text()


def test_profile_times_every_node_on_the_py_backend():
    x = sn.tensor("x", shape=("n", 4))
    W = sn.shared(np.ones((4, 3)), name="W")
    f = sn.function([x], sn.sum(sn.tanh(x @ W), axis=1), backend="py", optimize="none")
    profile = f.profile(np.ones((5, 4)), repeat=3)
    assert len(profile.rows) == len(f.graph)
    assert all(r.calls == 3 and r.where == "NumPy" for r in profile.rows)
    assert sum(profile.share(r) for r in profile.rows) == pytest.approx(1.0)
    medians = [r.median for r in profile.rows]
    assert medians == sorted(medians, reverse=True)
    matmul = next(r for r in profile.rows if r.op == "matmul")
    assert matmul.bytes == 3 * (5 * 4 + 4 * 3 + 5 * 3) * 8
    html = profile._repr_html_()
    assert html.count("<rect class='bar'") == len(profile.rows)
    assert "matmul" in profile.text()


@needs_c
def test_profile_times_every_step_on_the_c_backend():
    if "c" not in sn.backends.LINKERS:
        pytest.skip("the C backend is not registered")
    x = sn.tensor("x", shape=("n", 4))
    W = sn.shared(np.ones((4, 3)), name="W")
    f = sn.function([x], sn.sum(sn.tanh(x @ W), axis=1), backend="c")
    profile = f.profile(np.ones((5, 4)), repeat=3)
    assert len(profile.rows) == len(f.kernels) and all(r.calls == 3 for r in profile.rows)
    where = {r.op.split("[")[0]: r.where for r in profile.rows}
    assert where["matmul"] == "BLAS" and where["sum"] == "generated C on the CPU"
    assert not any("no per-step timing" in note for note in profile.notes)


def test_profile_without_arguments_uses_random_inputs():
    x = sn.tensor("x", shape=("batch", 4))
    y = sn.tensor("y", shape=("batch",))
    f = sn.function([x, y], sn.sum(x, axis=1) + y, backend="py")
    profile = f.profile(repeat=2)
    assert profile.calls == 2 and profile.rows
    assert "random arrays" in profile.notes[-1]


def test_profile_without_arguments_sizes_dims_written_as_expressions():
    a, b = sn.tensor("a", shape=("n",)), sn.tensor("b", shape=("m",))
    c = sn.tensor("c", shape=("n+m",))
    d = sn.tensor("d", shape=("2*n", 3))
    f = sn.function([a, b, c, d], [sn.concatenate([a, b]) + c, d], backend="py")
    assert [np.shape(v) for v in sample_inputs(f)] == [(64,), (64,), (128,), (128, 3)]
    assert f.profile(repeat=1).calls == 1


def test_profile_without_arguments_draws_the_sizes_the_shared_values_fix():
    """x of ``("batch", "f")`` against W of ``("f", 10)`` holding (5, 10): every call has f 5,
    so the random x is (64, 5), and ``("2*f",)`` is 10; an update tying ``n`` to the fixed
    size of its shared variable (3) draws n 3."""
    x, z = sn.tensor("x", shape=("batch", "f")), sn.tensor("z", shape=("2*f",))
    W = sn.shared(np.ones((5, 10)), name="W", shape=("f", 10))
    f = sn.function([x, z], [x @ W, z.sum()], backend="py")
    assert [np.shape(v) for v in sample_inputs(f)] == [(64, 5), (10,)]
    profile = f.profile(repeat=1)
    assert (
        profile.calls == 1
        and "(named dims = 64; f = 5, fixed by the shared values)" in (profile.notes[-1])
    )
    v, w = sn.tensor("v", shape=("n",)), sn.shared(np.zeros(3), name="w")
    g = sn.function([v], v.sum(), updates={w: v * 2}, backend="py")
    assert [np.shape(a) for a in sample_inputs(g)] == [(3,)]
    assert g.profile(repeat=1).calls == 1


def test_profile_without_arguments_says_which_random_inputs_did_not_fit():
    x = sn.tensor("x", shape=(None, None))  # as theano's T.matrix(): dims unknown
    W = sn.shared(np.ones((5, 2)), name="W")
    f = sn.function([x], x @ W, backend="py")
    with pytest.raises(sn.SymnbError) as error:
        f.profile(repeat=1)
    message = str(error.value)
    assert "x: float64[64, 64]" in message and "size 5 is different from 64" in message
    assert "f.profile(x_value, ...)" in message
    assert f.profile(np.ones((3, 5)), repeat=1).calls == 1


def test_profile_of_a_backend_without_step_timing_says_so():
    x = sn.tensor("x", shape=(3,))
    f = sn.function([x], sn.exp(x), backend="py")
    f.linker.steps_timed = False  # as a backend without per-step timing declares
    profile = f.profile(np.ones(3), repeat=2)
    assert [r.label for r in profile.rows] == ["whole call"]
    assert "no per-step timing" in profile.notes[0]


def test_charts():
    svg = bar_chart_svg(["a", "b"], [75.0, 25.0], unit="%")
    assert svg.count("<rect class='bar'") == 2 and "75.0%" in svg
    line = plot_line([3.0, 2.0, 1.5, 1.0], title="loss")._repr_svg_()
    assert len(line.split("points='")[1].split("'")[0].split()) == 4
    assert plot_bars(["x"], [np.float32(2)], unit=" ms")._repr_svg_().count("2.0 ms") == 1


def _polylines(svg: str) -> list[list[tuple[float, float]]]:
    runs = re.findall(r"<polyline class='curve'[^>]*points='([^']*)'", svg)
    return [[tuple(map(float, p.split(","))) for p in run.split()] for run in runs]


def test_a_line_breaks_where_values_are_not_finite_as_lines_do():
    """plot_line took min/max over inf/nan: 'nan' coordinates in the SVG, every finite point
    squashed on an axis; now the finite ones set the axis and the others leave a gap."""
    values = [3.0, 2.0, np.inf, 1.0, np.nan, 1.5]
    chart = plot_line(values, "loss")
    runs = _polylines(chart.svg)
    assert "nan" not in chart.svg.split("<polyline")[1] and [len(r) for r in runs] == [2, 1, 1]
    ys = np.array([y for run in runs for _, y in run])
    finite = np.array([3.0, 2.0, 1.0, 1.5])
    expected = 200.0 - (finite - finite.min()) / np.ptp(finite) * 160.0  # pad 40, height 240
    np.testing.assert_allclose(ys, expected, atol=0.05)
    assert repr(chart) == "<chart: line chart loss of 6 values, 1 to 3, 2 not finite (gaps)>"
    assert "1 to 3" in repr(plot_line([np.nan, 3.0, 1.0]))
    assert repr(plot_line([])) == "<chart: line chart of 0 values, nothing to draw>"
    assert ">no values<" in plot_line([]).svg and not _polylines(plot_line([]).svg)
    assert ">no finite values<" in plot_line([np.nan]).svg


def _bars(svg: str) -> list[tuple[float, float]]:
    found = re.findall(r"<rect class='bar' x='([^']*)'[^>]*width='([^']*)'", svg)
    return [(float(x), float(w)) for x, w in found]


def test_bars_of_negative_and_non_finite_values():
    """A negative value gave a negative SVG width (no bar) or a bar past the chart, NaN a
    width 'nan'; negative bars now go left of a zero line, scaled with the positive ones."""
    svg = plot_bars(["a", "b", "c"], [-1.0, 2.0, -0.5]).svg
    (ax, aw), (bx, bw), (cx, cw) = _bars(svg)
    zero = bx
    assert ax + aw == zero == cx + cw and bw == 2 * aw == 4 * cw > 0
    assert 260 <= ax and bx + bw <= 640 - 70  # inside the chart, room for the value texts
    assert f"x1='{zero:.1f}'" in svg  # the zero line
    for values in ([-1.0, -2.0], [-3.0, 0.0]):
        bars = _bars(plot_bars(["a", "b"], values).svg)
        assert all(w >= 0 and 260 <= x and x + w <= 640 for x, w in bars)
        assert bars[0][0] + bars[0][1] == bars[1][0] + bars[1][1]  # both end at zero
    svg = plot_bars(["a", "b", "c"], [1.0, np.nan, -np.inf]).svg
    assert len(_bars(svg)) == 1 and "'nan'" not in svg
    assert re.findall(r"class='gap'[^>]*><title>[^<]*</title>([^<]*)<", svg) == [
        "nan (not drawn)",
        "-inf (not drawn)",
    ]
    with pytest.raises(sn.ArgumentError, match=r"plot_bars: 2 labels for 3 values") as info:
        plot_bars(["a", "b"], [1.0, 2.0, 3.0])
    assert "test_displays.py" in str(info.value)  # raised at the user's line


def _curves(svg: str) -> dict[str, list[list[tuple[float, float]]]]:
    found: dict = {}
    for name, points in re.findall(r"data-series='([^']*)'[^>]*points='([^']*)'", svg):
        pairs = [tuple(map(float, p.split(","))) for p in points.split()]
        found.setdefault(name, []).append(pairs)
    return found


def test_lines_share_axes_and_break_where_values_are_not_finite():
    svg = plot_lines(
        {"train": [4.0, 2.0, 1.0], "as written": [1.0, np.inf, np.nan, 3.0, 2.0]},
        title="loss",
        x=None,
    )._repr_svg_()
    curves = _curves(svg)
    (train,) = curves["train"]
    first, second = curves["as written"]  # the inf and the nan leave one gap
    assert [len(first), len(second)] == [1, 2] and len(train) == 3
    ys = [y for run in (train, first, second) for _, y in run]
    assert max(ys) == ys[2] and min(ys) == ys[0]  # 1.0 lowest, 4.0 highest (SVG y points down)
    assert ys[2] == ys[3] and train[0][0] == first[0][0]  # equal values, equal positions
    assert re.findall(r"class='legend'[^>]*>([^<]*)<", svg) == ["train", "as written"]
    log = _curves(plot_lines({"a": [1.0, 10.0, 100.0, 0.0]}, log=True)._repr_svg_())["a"]
    (run,) = log  # 0 has no logarithm: left out
    assert len(run) == 3 and run[1][1] == (run[0][1] + run[2][1]) / 2  # evenly spaced decades
    xs = [x for x, _ in _curves(plot_lines({"a": [0, 1, 2]}, x=[0.0, 1.0, 4.0]).svg)["a"][0]]
    assert xs[1] - xs[0] == (xs[2] - xs[0]) / 4


def test_images_are_grids_of_squares_coloured_by_sign_and_size():
    weights = np.array([[1.0, -0.5], [0.0, np.nan]])
    svg = show_images([weights, np.ones((3, 3))], titles=["w", "ones"]).svg
    cells = re.findall(r"<rect [^>]*fill='(#[0-9a-f]{6})'", svg)
    assert len(cells) == 4 + 9
    assert cells[:4] == ["#dc2626", "#92b1f5", "#ffffff", "#fde047"]  # red, light blue, white
    assert ">w<" in svg and ">ones<" in svg
    pixels = re.findall(r"fill='(#[0-9a-f]{6})'", show_images([[[0.0, 1.0]]], diverging=False).svg)
    assert pixels == ["#ffffff", "#000000"]


def _svg_texts(svg: str, cls: str | None = None) -> list[tuple[str, str | None]]:
    """Each ``<text>`` of a chart (of class ``cls``): what it shows, and its tooltip."""
    found = []
    for el in ElementTree.fromstring(svg).iter("{http://www.w3.org/2000/svg}text"):
        if cls is None or el.get("class") == cls:
            tip = el.find("{http://www.w3.org/2000/svg}title")
            found.append((el.text or "", None if tip is None else tip.text))
    return found


def test_images_of_more_dims_are_drawn_one_grid_a_matrix():
    """A conv layer's filters (out, in, h, w) or a stack (n, h, w) raised a bare ValueError
    "too many values to unpack" from inside the chart; each matrix over the last two axes
    is drawn as its own grid, titled with its index."""
    stack = np.stack([np.ones((2, 3)), -np.ones((2, 3))])
    svg = show_images([stack], titles=["filters"]).svg
    cells = re.findall(r"<rect [^>]*fill='(#[0-9a-f]{6})'", svg)
    assert cells == ["#dc2626"] * 6 + ["#2563eb"] * 6  # each slice red, then blue
    assert [t for t, _ in _svg_texts(svg)] == ["filters[0]", "filters[1]"]
    bank = np.arange(2 * 3 * 2 * 2, dtype=float).reshape(2, 3, 2, 2)
    svg = show_images([np.eye(2), bank]).svg
    titles = [t for t, _ in _svg_texts(svg)]
    assert titles == ["", *(f"1[{i}, {j}]" for i in range(2) for j in range(3))]
    assert len(re.findall(r"<rect ", svg)) == 4 + 6 * 4
    assert [t for t, _ in _svg_texts(show_images([bank[0]]).svg)] == ["[0]", "[1]", "[2]"]
    assert "7 matrices" in repr(show_images([np.eye(2), bank]))
    with pytest.raises(sn.ArgumentError) as info:
        show_images([np.eye(2), [[1.0, 2.0], [3.0]]], titles=["w", "ragged"])
    message = str(info.value)
    assert message.startswith("show_images: image 1 ('ragged') is not an array of numbers")
    assert "test_displays.py" in message  # raised at the user's line


def test_chart_texts_too_long_are_cut_in_the_middle_and_read_apart():
    """Legend labels were cut to their first 24 characters, bar labels to 40 and image
    titles to 16, with no mark and (but a bar's) no tooltip: "test loss, lr=0.1, batch 32"
    and "... batch 64" read alike. A long text is cut in its middle at "…" with the whole
    text as its tooltip; texts that would still read alike are shown whole, the chart
    widened to hold them."""
    sweep = {"test loss, lr=0.1, batch 32": [2.0, 1.0], "test loss, lr=0.1, batch 64": [2.0, 0.5]}
    svg = plot_lines(sweep).svg
    assert _svg_texts(svg, "legend") == [
        ("test loss, l…1, batch 32", "test loss, lr=0.1, batch 32"),
        ("test loss, l…1, batch 64", "test loss, lr=0.1, batch 64"),
    ]
    assert "width='560'" in svg and set(_curves(svg)) == set(sweep)
    middle = {"run lr=0.1 seed=1, test loss": [1.0], "run lr=0.1 seed=2, test loss": [1.0]}
    svg = plot_lines({**middle, "short": [1.0]}).svg
    assert _svg_texts(svg, "legend") == [(label, None) for label in [*middle, "short"]]
    assert "width='584'" in svg  # 4 characters more than the legend holds, 6 pixels each
    titles = ["layer1 filter 100", "layer1 filter 101", "w"]
    svg = show_images([np.eye(2)] * 3, titles=titles).svg
    assert _svg_texts(svg) == [
        ("layer1 f…ter 100", "layer1 filter 100"),
        ("layer1 f…ter 101", "layer1 filter 101"),
        ("w", None),
    ]
    long = "a long label that names a run of a sweep, 1"
    svg = plot_bars([long, long[:-1] + "2", "b"], [1.0, 2.0, 3.0]).svg
    shown = _svg_texts(svg)[::2]  # each label, then its value
    assert shown[:2] == [("a long label that na…a run of a sweep, 1", long)] + [
        ("a long label that na…a run of a sweep, 2", long[:-1] + "2")
    ]
    assert shown[2] == ("b", None)
    same = ["x" * 20 + "A" + "y" * 20, "x" * 20 + "B" + "y" * 20]  # differ in the middle
    assert [t for t, _ in _svg_texts(plot_bars(same, [1.0, 2.0]).svg)[::2]] == same


def test_lines_refuse_two_series_whose_labels_read_alike():
    """``{1: a, "1": b}`` drew one line: the labels were compared as text, the second
    series replacing the first unsaid."""
    with pytest.raises(sn.ArgumentError) as info:
        plot_lines({1: [1.0, 2.0], "1": [2.0, 1.0]})
    message = str(info.value)
    assert message.startswith("plot_lines: series 1 and '1' both read '1' in the legend")
    assert "test_displays.py" in message
    with pytest.raises(sn.ArgumentError, match=r"series 'a\\x01' and 'a\\\\x01' both read"):
        plot_lines({"a\x01": [1.0], "a\\x01": [2.0]})


def test_profile_checks_its_inputs_as_a_call_does():
    a, b = sn.tensor("a", shape=("n",)), sn.tensor("b", shape=("m",))
    c = sn.tensor("c", shape=("n+m",))
    f = sn.function([a, b, c], sn.concatenate([a, b]) + c, backend="py")
    wrong = (np.ones(2), np.ones(3), np.ones(4))  # n+m is 5, not 4
    with pytest.raises(sn.InputError) as call_error:
        f(*wrong)
    with pytest.raises(sn.InputError) as profile_error:
        f.profile(*wrong, repeat=1)
    assert str(profile_error.value) == str(call_error.value)


def test_caller_text_in_charts_is_never_markup():
    """Units, titles, axis labels, legends and image titles come from the caller: a tag in
    them must reach the page as text (an ``onerror`` would run in the notebook)."""
    bad = "<img src=x onerror=alert(1)>"
    charts = [
        plot_bars([bad], [1.0], unit=bad),
        plot_line([1.0, 2.0], title=bad, xlabel=bad),
        plot_lines({bad: [1.0, 2.0]}, title=bad, xlabel=bad),
        show_images([np.eye(2)], titles=[bad]),
    ]
    for chart in charts:
        bundle = chart._repr_mimebundle_()
        for text in (bundle["image/svg+xml"], bundle["text/html"]):
            assert "<img" not in text
        root = ElementTree.fromstring(bundle["image/svg+xml"])  # well-formed, or this raises
        assert not root.findall(".//{http://www.w3.org/1999/xhtml}img")
        assert not [e for e in root.iter() if e.tag.endswith("img")]
    assert "1.0&lt;img" in charts[0]._repr_svg_()  # the unit is shown, as text


def test_control_characters_in_chart_text_are_written_as_escapes():
    """A control character in a label, unit, title or axis label (from a data file, a name
    decoded from bytes) was copied raw into the SVG's text, <title> and aria-label: not
    well-formed XML, a broken image. They are written as their escapes, as the graph
    drawings write them (symnb.core.words.printable)."""
    charts = [
        plot_bars(["lr\x01", "b"], [1.0, 2.0], unit=" ms\x0b"),
        plot_line([3.0, 2.0, 1.0], "loss\x1b", xlabel="step\x07"),
        plot_lines({"train\x02": [3.0, 2.0, 1.0]}, "loss\x1b", xlabel="epoch\x00"),
        show_images([np.eye(2)], ["w\x03"]),
    ]
    for chart in charts:
        bundle = chart._repr_mimebundle_()
        ElementTree.fromstring(bundle["image/svg+xml"])  # well-formed, or this raises
        ElementTree.fromstring(re.search(r"<svg.*</svg>", bundle["text/html"]).group(0))
    bars, line, lines, images = (c.svg for c in charts)
    assert ">lr\\x01</text>" in bars and "<title>lr\\x01: 1.00 ms\\x0b</title>" in bars
    assert ">loss\\x1b</text>" in line and ">step\\x07 (0–2)</text>" in line
    assert "data-series='train\\x02'" in lines and ">train\\x02</text>" in lines
    assert (
        ">epoch\\x00</text>" in lines and "aria-label='line chart loss\\x1b of train\\x02" in lines
    )
    assert ">w\\x03</text>" in images
    assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", bars + line + lines + images)


def test_lines_refuse_an_x_of_another_length_than_a_series():
    """``x`` shorter than a series' values drew as many points as ``x`` had (zip dropped the
    rest, the chart saying nothing); it is refused naming the series and both lengths, as
    plot_bars refuses labels and values of different lengths."""
    with pytest.raises(sn.ArgumentError) as info:
        plot_lines({"train": [3.0, 2.0], "loss": [3.0, 2.0, 1.0, 0.5]}, "loss", x=[0, 1])
    message = str(info.value)
    assert message.startswith("plot_lines: series 'loss' has 4 values for 2 x values")
    assert "test_displays.py" in message  # raised at the user's line
    with pytest.raises(sn.ArgumentError, match="series 'a' has 2 values for 3 x values"):
        plot_lines({"a": [1.0, 2.0]}, x=np.arange(3))
    (run,) = _curves(plot_lines({"a": [1.0, 2.0, 4.0]}, x=[[0, 1, 5]]).svg)["a"]
    assert len(run) == 3
