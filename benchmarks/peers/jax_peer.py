"""JAX with ``jax.jit`` on the CPU, float64 enabled (x64) so float64 workloads stay float64."""

from __future__ import annotations

import functools

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402 - after enabling x64
import numpy as np  # noqa: E402

from benchmarks.peers.base import BasePeer  # noqa: E402
from benchmarks.workloads import CHAIN_DEPTH, CONVNET2, LEARNING_RATE  # noqa: E402

MLP = ("w1", "b1", "w2", "b2", "w3", "b3")
CONVNET = ("kernels", "kbias", "dense", "dbias")


class Peer(BasePeer):
    name = "jax"

    def version(self) -> str:
        return f"{jax.__version__} (jit, {jax.devices()[0].platform})"

    def configure_cache(self, directory: str) -> None:
        jax.config.update("jax_compilation_cache_dir", directory)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)

    def start_runtime(self) -> None:
        jax.devices()  # initialises the CPU client

    def build_w1(self, v):
        return _jitted(_fused, v, "xyz")

    def build_w1b(self, v):
        return _jitted(_axpy_chain, v, "xyzw")

    def build_w2(self, v):
        grad_fn = jax.jit(jax.value_and_grad(_xent))
        logits, labels = jnp.asarray(v["logits"]), jnp.asarray(v["labels"])

        def run():
            loss, grad = jax.block_until_ready(grad_fn(logits, labels))
            return [loss, grad]

        return run

    def build_w3(self, v):
        return _training(_mlp_loss(jax.nn.relu), v, MLP)

    def build_w3s(self, v):
        return _training(_mlp_loss(jnp.tanh), v, MLP)

    def build_w4(self, v):
        return _jitted(_a_times_b_plus_one, v, "ab")

    def build_w4_float(self, v):
        """The scalars go to the jitted function as they are, converted by JAX in each call."""
        compiled, a, b = jax.jit(_a_times_b_plus_one), v["a"], v["b"]

        def run():
            return [compiled(a, b).block_until_ready()]

        return run

    build_w4_npscalar = build_w4_float

    def build_w6(self, v):
        return _jitted(_logsumexp_rows, v, "x")

    def build_w7_tanh(self, v):
        return _jitted(_tanh_chain, v, "x")

    def build_w7_abs(self, v):
        return _jitted(_abs_chain, v, "x")

    def build_w8(self, v):
        return _training(_convnet_loss, v, CONVNET)

    def build_w9(self, v):
        """``lax.scan`` over the steps inside one jitted ``value_and_grad``."""
        compiled = jax.jit(jax.value_and_grad(_rnn_loss, argnums=(2, 3)))
        args = [jnp.asarray(v[k]) for k in ("x", "h0", "w", "u")]

        def run():
            loss, (gw, gu) = jax.block_until_ready(compiled(*args))
            return [loss, gw, gu]

        return run

    def build_w8b(self, v):
        return _training(_convnet2_loss, v, CONVNET2)

    # -- W11: building graphs (benchmarks/build_time.py times these) ------------------------
    # A graph is (closed jaxpr, the weights it takes before x): make_jaxpr traces with them.
    def graph_mlp(self, arrays):
        """``make_jaxpr`` of the forward pass, the weights as arguments (batch of 32)."""
        params = [a for pair in arrays for a in pair]  # NumPy arrays: make_jaxpr takes them
        x = np.zeros((32, arrays[0][0].shape[0]))
        return jax.make_jaxpr(_deep_mlp)(params, x), params

    def graph_mlp_grad(self, forward):
        _, params = forward
        x = np.zeros((32, params[0].shape[0]))
        return jax.make_jaxpr(jax.grad(_deep_mlp_sum))(params, x), params

    def graph_chain_grad(self, steps: int):
        chain = functools.partial(_chain_sum, steps=steps)
        return jax.make_jaxpr(jax.grad(chain))(np.zeros(64)), []

    def graph_nodes(self, graph) -> int:
        return len(graph[0].jaxpr.eqns)

    def graph_value(self, graph, x):
        """The jaxpr evaluated at ``x`` (the tests check W11's graphs with it)."""
        closed, params = graph
        out = jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *params, x)
        return [np.asarray(v) for v in out]


def _rnn_loss(x, h0, w, u):
    def step(h, xt):
        h = jnp.tanh(xt @ u + h @ w)
        return h, h

    _, hs = jax.lax.scan(step, h0, x)
    return jnp.mean(hs * hs)


def _deep_mlp(params, x):
    h = x
    for w, b in zip(params[::2], params[1::2]):
        h = jnp.tanh(h @ w + b)
    return h


def _deep_mlp_sum(params, x):
    return _deep_mlp(params, x).sum()


def _chain_sum(x, steps):
    for _ in range(steps):
        x = jnp.tanh(x * 0.9 + 0.1)
    return x.sum()


def _jitted(fn, v, names):
    compiled = jax.jit(fn)
    args = [jnp.asarray(v[k]) for k in names]

    def run():
        return [compiled(*args).block_until_ready()]

    return run


def _training(loss_fn, v, keys):
    """A jitted SGD step; the new parameters replace the old ones, as updates would, in the
    old ones' buffers (``donate_argnums``), as JAX's training loops do."""

    def step(params, x, labels):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, labels)
        return loss, [p - LEARNING_RATE * g for p, g in zip(params, grads)]

    compiled = jax.jit(step, donate_argnums=0)
    state = {"params": [jnp.asarray(v[k]) for k in keys]}
    x, labels = jnp.asarray(v["x"]), jnp.asarray(v["labels"])

    def run():
        loss, state["params"] = jax.block_until_ready(compiled(state["params"], x, labels))
        return [loss, *state["params"]]

    return run


def _fused(x, y, z):
    return jnp.exp(-x * x) * jnp.sin(y) + jnp.log1p(jnp.abs(z)) / (1 + x * x)


def _axpy_chain(x, y, z, w):
    return 2 * x + 3 * y - z * w


def _a_times_b_plus_one(a, b):
    return a * b + 1


def _logsumexp_rows(x):
    return jax.nn.logsumexp(x, axis=1)


def _tanh_chain(x):
    for _ in range(CHAIN_DEPTH):
        x = jnp.tanh(x * 0.9 + 0.1)
    return x


def _abs_chain(x):
    for _ in range(CHAIN_DEPTH):
        x = jnp.abs(x * 0.9 - 0.1)
    return x


def _xent(logits, labels):
    logp = jax.nn.log_softmax(logits, axis=1)
    return -jnp.take_along_axis(logp, labels[:, None], axis=1).mean()


def _mlp_loss(act):
    """The loss of a two-hidden-layer MLP with activation ``act``."""

    def loss(params, x, labels):
        w1, b1, w2, b2, w3, b3 = params
        h2 = act(act(x @ w1 + b1) @ w2 + b2)
        return _xent(h2 @ w3 + b3, labels)

    return loss


def _convnet_loss(params, x, labels):
    kernels, kbias, dense, dbias = params
    conv = jax.lax.conv(x, kernels, (1, 1), "VALID")
    act = jax.nn.relu(conv + kbias[None, :, None, None])
    return _xent(act.reshape(x.shape[0], -1) @ dense + dbias, labels)


def _convnet2_loss(params, x, labels):
    k1, b1, k2, b2, dense, dbias = params
    act1 = jax.nn.relu(jax.lax.conv(x, k1, (1, 1), "VALID") + b1[None, :, None, None])
    act2 = jax.nn.relu(jax.lax.conv(act1, k2, (1, 1), "VALID") + b2[None, :, None, None])
    pooled = jax.lax.reduce_window(act2, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
    return _xent(pooled.reshape(x.shape[0], -1) @ dense + dbias, labels)
