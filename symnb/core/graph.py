"""The graph a function compiles: its own copy of the nodes, their clients, safe replacement.

Leaves (inputs, constants, shared variables) are shared with the user's expressions; every
node is cloned, so rewrites can edit a Graph without touching what the user built.
"""

from __future__ import annotations

from symnb.core.dims import shapes_unify
from symnb.core.hooks import hook
from symnb.core.op import Apply
from symnb.core.variable import Constant, SharedVariable, Variable
from symnb.core.words import counted
from symnb.errors import GraphError

OUTPUT = "output"  # the client that stands for "is a graph output"


class Clients:
    """The users of one variable: ``(node, input index)`` pairs (``(OUTPUT, i)`` for a graph
    output), in the order they were attached.

    Reads like the list it replaces (iterate, ``len``, ``[0]``, ``==`` a list); kept in a dict
    so that detaching one client costs O(1), not the length of the list: a variable with
    thousands of clients (a merged constant along a long chain) would make a rewrite that
    drops them all quadratic.
    """

    __slots__ = ("_pairs",)

    def __init__(self, pairs=()):
        self._pairs: dict[tuple, None] = dict.fromkeys(pairs)

    def append(self, pair: tuple) -> None:
        self._pairs[pair] = None

    def discard(self, pair: tuple) -> None:
        self._pairs.pop(pair, None)

    def __iter__(self):
        return iter(self._pairs)

    def __len__(self):
        return len(self._pairs)

    def __contains__(self, pair):
        return pair in self._pairs

    def __getitem__(self, index):
        return list(self._pairs)[index] if index else next(iter(self._pairs))

    def __eq__(self, other):
        if isinstance(other, Clients):
            other = list(other)
        return isinstance(other, list) and list(self._pairs) == other

    __hash__ = None

    def __repr__(self):
        return repr(list(self._pairs))


def ancestors(outputs: list[Variable], known: set | None = None) -> list[Apply]:
    """Nodes that the outputs depend on, inputs before users (iterative: deep graphs are fine).

    The walk stops at nodes in ``known`` (those are left out), so adding a small subgraph to a
    large one costs the size of the small one.
    """
    order: list[Apply] = []
    seen: set[int] = set()
    for out in outputs:
        stack = [(out.owner, False)] if out.owner else []
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen or (known is not None and node in known):
                continue
            seen.add(id(node))
            stack.append((node, True))
            stack.extend([(i.owner, False) for i in reversed(node.inputs) if i.owner])
    return order


def ancestors_after(outputs: list[Variable], replace: dict | None) -> list[Apply]:
    """The nodes ``clone_graph(outputs, replace)`` reads, as ``ancestors`` orders them: the
    walk stops at each key of ``replace`` and goes on from its replacement, which is read as
    written (``replace`` is not applied inside it, as ``clone_graph`` does not)."""
    if not replace:
        return ancestors(outputs)
    order, plain = _walk_after(outputs, {id(k): v for k, v in replace.items()})
    first = ancestors(plain)
    known = set(first)
    return first + [node for node in order if node not in known]


def leaves_after(outputs: list[Variable], replace: dict | None) -> list[Variable]:
    """``leaves`` of what ``clone_graph(outputs, replace)`` reads (see ``ancestors_after``):
    a key is not read, its replacement's leaves are."""
    if not replace:
        return leaves(outputs)
    keys = {id(k): v for k, v in replace.items()}
    order, plain = _walk_after(outputs, keys)
    found: dict[int, Variable] = {}
    for var in [o for o in outputs if id(o) not in keys] + plain:
        if var.owner is None:
            found.setdefault(id(var), var)
    for node in ancestors(plain):
        found.update((id(v), v) for v in node.inputs if v.owner is None and id(v) not in found)
    for node in order:
        for var in node.inputs:
            if var.owner is None and id(var) not in keys:
                found.setdefault(id(var), var)
    return list(found.values())


def _walk_after(outputs: list[Variable], keys: dict) -> tuple[list[Apply], list[Variable]]:
    """The nodes read from ``outputs`` up to the keys (``{id(key): replacement}``), inputs
    before users, and the replacements met, each once."""
    order: list[Apply] = []
    plain: dict[int, Variable] = {}
    seen: set[int] = set()

    def owners(variables) -> list:
        found = []
        for var in variables:
            if id(var) in keys:
                plain.setdefault(id(keys[id(var)]), keys[id(var)])
            elif var.owner is not None:
                found.append((var.owner, False))
        return found

    for out in outputs:
        stack = owners([out])
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            stack.extend(owners(reversed(node.inputs)))
    return order, list(plain.values())


def default_updates(
    outputs: list[Variable], updated, since: int = -1, replace: dict | None = None
) -> list[tuple[SharedVariable, Variable]]:
    """The ``default_update`` of each shared variable that ``outputs`` (or those updates)
    read, has one, and is not in ``updated`` already (a random stream's counter): what a
    compiled function, or a loop's step, must also write. ``since``: only shared variables
    with a uid from it on (made while a loop's step was traced: one made before is a value
    from outside, the same at every step). ``replace`` (a function's ``givens``): what is
    read once it is applied (``clone_graph``), as Theano collected default updates after its
    givens: a variable only a key reads has none, one a replacement reads does; a default
    update is read with ``replace`` applied too, as the function applies it there. A node's
    own (``node_default_updates``) takes the place of a variable's default update, also where
    the variable is found only through another default update."""
    found: list = []
    pending = list(outputs)
    by_node: dict = {}  # (a node's carried default holds where its graph reads the variable)
    while pending:
        new = []
        for key, value in _node_default_updates(pending, replace).items():
            by_node.setdefault(key, value)
        for var in leaves_after(pending, replace):
            if var.uid < since:
                continue
            default = var.tag.get("default_update") if isinstance(var, SharedVariable) else None
            if default is not None:
                default = by_node.get(id(var), default)
            taken = any(var is s for s in updated) or any(var is s for s, _ in found)
            if default is not None and not taken:
                found.append((var, default))
                new.append(default)
        pending = new
    return found


def _node_default_updates(outputs: list[Variable], replace: dict | None = None) -> dict:
    """``{id(shared): value}`` from the nodes ``outputs`` depend on (once ``replace`` is
    applied) that advance a shared variable themselves (``node_default_updates``)."""
    found: dict = {}
    for node in ancestors_after(outputs, replace):
        for var, value in node_default_updates(node):
            found.setdefault(id(var), value)
    return found


def node_default_updates(node: Apply) -> list:
    """``(shared variable, value)`` pairs that replace those variables' own
    ``default_update`` in a graph reading ``node``: its op's (``Op.default_updates``: a loop
    drawing random numbers step by step), then those a copy of a graph carries in the node's
    ``tag["default_updates"]`` (``theano.clone`` of a draw sized by an input it replaced:
    the copy's draw advances by the copy's size, reading the replacement)."""
    own = node.op.default_updates(node)
    carried = node.tag.get("default_updates")
    return [*own, *carried] if carried else own


def leaves(outputs: list[Variable]) -> list[Variable]:
    """Variables with no owner that the outputs depend on, in first-use order."""
    found: dict[int, Variable] = {}
    for out in outputs:
        if out.owner is None:
            found.setdefault(id(out), out)
    for node in ancestors(outputs):
        for var in node.inputs:
            if var.owner is None:
                found.setdefault(id(var), var)
    return list(found.values())


def clone_graph(
    outputs: list[Variable],
    replace: dict | None = None,
    rebuild: bool = False,
    impure: dict | None = None,
) -> list[Variable]:
    """Copies of the outputs with every node cloned and ``replace`` substituted. A clone keeps
    each node's output types, so a replacement must have its key's type; with ``rebuild`` a
    node whose inputs changed is built again by its op, its types inferred anew (a
    replacement of another dtype or rank). A node some of whose outputs are replaced is
    still cloned for the others (its inputs may be replaced too); the replaced ones keep
    their replacement. ``impure``: a dict that gets ``{copy: original}`` for each output
    of an impure node copied (``note_impure``)."""
    memo: dict[int, Variable] = {id(k): v for k, v in (replace or {}).items()}
    for node in ancestors(outputs):
        if all(id(o) in memo for o in node.outputs):
            continue
        inputs = [memo.get(id(i), i) for i in node.inputs]
        changed = any(new is not old for new, old in zip(inputs, node.inputs, strict=True))
        new = _rebuilt(node, inputs) if rebuild and changed else node.clone_with(inputs)
        note_impure(node, new, impure)
        for old, var in zip(node.outputs, new.outputs, strict=True):
            memo.setdefault(id(old), var)
    return [memo.get(id(o), o) for o in outputs]


def note_impure(node: Apply, copy: Apply, impure: dict | None) -> None:
    """Where ``node`` is impure (``pure = False``: a print, a random draw), ``{copy's
    output: node's output}`` into ``impure`` (when it is a dict), for ``with_own_effects``."""
    if impure is not None and not node.op.pure:
        impure.update(zip(copy.outputs, node.outputs, strict=True))


def with_own_effects(outputs: list, impure: dict) -> list:
    """``outputs`` (None entries kept), built from a copy of a graph that computes the same
    values as the graph (one rebuilt for differentiation: markers put in, formulas computed
    by their ops), reading each impure node of the graph where they read its copy
    (``impure``: ``{copy: original}``, from ``clone_graph`` or ``note_impure``). The copy
    would run a second time each call, a print printing twice, a draw drawing again (impure
    nodes are never merged); the gradient was already built through the copy, so it still
    stops where the copy says."""
    return substitute(outputs, impure) if impure else list(outputs)


def substitute(outputs: list, replace: dict, may_clone=None) -> list:
    """``outputs`` with ``replace`` applied, cloning only the nodes that change (and, with
    ``may_clone``, only the nodes it accepts: the others keep reading what they read). Unlike
    ``clone_graph``, the nodes nothing replaced reaches stay the graph's own."""
    memo = {id(old): new for old, new in replace.items()}
    for node in ancestors([v for v in outputs if v is not None]):
        if (may_clone is None or may_clone(node)) and any(id(x) in memo for x in node.inputs):
            new = node.clone_with([memo.get(id(x), x) for x in node.inputs])
            for old, var in zip(node.outputs, new.outputs, strict=True):
                memo.setdefault(id(old), var)  # (a replaced output keeps its replacement)
    return [None if out is None else memo.get(id(out), out) for out in outputs]


def _rebuilt(node: Apply, inputs: list[Variable]) -> Apply:
    """``node``'s op applied to ``inputs`` anew, its outputs keeping their names."""
    new = node.op.make_node(*inputs)
    for old, var in zip(node.outputs, new.outputs, strict=True):
        var.name = old.name
    return new


def _missing_input_message(var: Variable, inputs) -> str:
    """The outputs read ``var``, not given; when an input has its name, the input is a
    *different* variable of that name (made again, as a notebook cell run twice does)."""
    created = f" (created at {var.source})" if var.source else ""
    twin = next((v for v in inputs if var.name and v.name == var.name), None)
    if twin is None:
        return f"the outputs depend on {var.describe()}, which is not among the inputs{created}"
    made = f", created at {twin.source}" if twin.source else ""
    return (
        f"the outputs depend on {var.describe()}{created}, but the input given under that "
        f"name is a different variable with the same name{made}"
        f"\n  hint: two variables were made with the name '{var.name}' (a cell or line run "
        "again makes a new one); build the outputs from the variable you pass, or pass the "
        "one they were built from"
    )


class Graph:
    """Inputs, outputs and the nodes between them, with each variable's clients."""

    def __init__(self, inputs: list[Variable], outputs: list[Variable], clone: bool = True):
        self.inputs = list(inputs)
        self.outputs = clone_graph(outputs) if clone else list(outputs)
        self.clients: dict[Variable, Clients] = {}
        self.nodes: set[Apply] = set()
        for node in ancestors(self.outputs):
            self._attach(node)
        for i, out in enumerate(self.outputs):
            self.clients.setdefault(out, Clients()).append((OUTPUT, i))
        self._check_inputs()

    def _check_inputs(self):
        given = {id(v) for v in self.inputs}
        for var in leaves(self.outputs):
            if id(var) in given or isinstance(var, (Constant, SharedVariable)):
                continue
            raise GraphError(_missing_input_message(var, self.inputs))

    def _attach(self, node: Apply):
        self.nodes.add(node)
        for i, var in enumerate(node.inputs):
            self.clients.setdefault(var, Clients()).append((node, i))

    # -- queries --------------------------------------------------------------------------
    def toposort(self) -> list[Apply]:
        return ancestors(self.outputs)

    def variables(self) -> list[Variable]:
        seen = {id(v): v for v in leaves(self.outputs)}
        for node in self.toposort():
            for v in node.outputs:
                seen.setdefault(id(v), v)
        return list(seen.values())

    def __len__(self):
        return len(self.nodes)

    # -- display: drawn by symnb.viz, through the hooks it registers (core sits below viz) ---
    def __str__(self) -> str:
        return hook("format_graph")(self)

    def __repr__(self) -> str:
        sizes = {"input": len(self.inputs), "node": len(self), "output": len(self.outputs)}
        counts = ", ".join(counted(n, noun) for noun, n in sizes.items())
        return f"<symnb.Graph: {counts}>"

    def _repr_svg_(self) -> str | None:
        return hook("graph_svg")(self)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """The SVG; where Graphviz cannot draw it, a note saying why and the DOT text."""
        return hook("graph_bundle")(self, include, exclude)

    # -- editing --------------------------------------------------------------------------
    def replace(self, old: Variable, new: Variable) -> tuple[list[Apply], list[Apply]]:
        """Make every client of ``old`` use ``new``; types must agree (same dtype, ndim).

        A value nothing reads (not in the graph, or left unread by an earlier replacement:
        the second output of a node the first one's replacement dropped) is left as it is,
        nothing attached; the leaves ``new`` brings in must be the graph's inputs, constants
        or shared values, as the graph's own leaves are. Returns the nodes attached (those
        ``new`` brought in) and the nodes dropped (those no output needs any more); both are
        found locally, so a replace costs what it touches.
        """
        check_replaceable(old, new)
        if old not in self.clients:
            return [], []  # (no user to rewire: nothing of new's would be read)
        added = ancestors([new], known=self.nodes)
        if any(i is old for node in added for i in node.inputs):  # (old's users would be new's)
            raise GraphError(
                f"cannot replace {old.describe()} with {new.describe()}, which reads it: the "
                "graph would be a cycle"
            )
        self._check_new_leaves(old, new, added)
        for node in added:
            self._attach(node)
        for client, i in self.clients.pop(old, ()):
            if client == OUTPUT:
                self.outputs[i] = new
            else:
                client.inputs[i] = new
            self.clients.setdefault(new, Clients()).append((client, i))
        return added, self._drop_unused(old)

    def holds(self, var: Variable) -> bool:
        """``var`` is a value of this graph: read by it, made by one of its nodes or an input."""
        if var in self.clients or (var.owner is not None and var.owner in self.nodes):
            return True
        return any(var is i for i in self.inputs)

    def _check_new_leaves(self, old: Variable, new: Variable, added: list[Apply]) -> None:
        """The leaves a replacement brings in are constants, shared values or the graph's
        inputs (``_check_inputs`` for the nodes ``added``): a variable of another graph would
        be a value the function is never given."""
        fresh = [new] if new.owner is None else []
        fresh += [v for node in added for v in node.inputs if v.owner is None]
        for var in fresh:
            if var in self.clients or isinstance(var, (Constant, SharedVariable)):
                continue
            if not any(var is i for i in self.inputs):
                created = f" (created at {var.source})" if var.source else ""
                raise GraphError(
                    f"cannot replace {old.describe()} with {new.describe()}, which reads "
                    f"{var.describe()}"
                    f"{created}, which is not among the graph's inputs (a variable of another "
                    "graph: a replacement is built from the graph's own values, constants "
                    "and shared variables)"
                )

    def add_output(self, var: Variable) -> list[Apply]:
        """``var`` as one more output, the nodes it reads that the graph lacks attached (its
        leaves must be the graph's inputs, shared values or constants); those nodes."""
        added = ancestors([var], known=self.nodes)
        for node in added:
            self._attach(node)
        self.clients.setdefault(var, Clients()).append((OUTPUT, len(self.outputs)))
        self.outputs.append(var)
        self._check_inputs()
        return added

    def replace_all(self, pairs) -> tuple[list[Apply], list[Apply]]:
        """``replace`` for each ``(old, new)`` pair in order; the nodes attached and dropped."""
        added: list[Apply] = []
        removed: list[Apply] = []
        for old, new in pairs:
            more, fewer = self.replace(old, new)
            added += more
            removed += fewer
        gone, kept = set(removed), set(added)
        return [n for n in added if n not in gone], [n for n in removed if n not in kept]

    def _drop_unused(self, var: Variable) -> list[Apply]:
        """Detach the nodes nothing uses any more, walking up from ``var``'s owner."""
        removed = []
        stack = [var.owner] if var.owner is not None else []
        while stack:
            node = stack.pop()
            if node not in self.nodes or any(self.clients.get(o) for o in node.outputs):
                continue
            self.nodes.discard(node)
            removed.append(node)
            for out in node.outputs:
                self.clients.pop(out, None)
            for i, inp in enumerate(node.inputs):
                self._forget_client(inp, node, i)
                if inp.owner is not None:
                    stack.append(inp.owner)
        return removed

    def _forget_client(self, var: Variable, node: Apply, i: int) -> None:
        """Detach one client of ``var``: O(1), whatever the number of its clients."""
        users = self.clients.get(var)
        if users is None:
            return
        users.discard((node, i))
        if not users:
            del self.clients[var]


def check_replaceable(old: Variable, new: Variable) -> None:
    """A replacement keeps the dtype, the rank and every provable dim."""
    a, b = old.type, new.type
    if not (a.dtype == b.dtype and shapes_unify(a.shape, b.shape)):
        raise GraphError(f"cannot replace {old.describe()} with {new.describe()}")
