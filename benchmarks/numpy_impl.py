"""Hand-written NumPy versions of the workloads, generic in dtype.

Run in float64 they are the reference every result is checked against; run in the workload's
dtype they are the "numpy" peer. Training steps update their parameters in place and return
the loss, as a compiled function with SGD updates does.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def fused(x, y, z):
    """W1: transcendental-heavy elementwise expression."""
    return np.exp(-x * x) * np.sin(y) + np.log1p(np.abs(z)) / (1 + x * x)


def axpy_chain(x, y, z, w):
    """W1b: a memory-bound chain of cheap ops."""
    return 2 * x + 3 * y - z * w


def softmax_xent(logits, labels):
    """W2: mean softmax cross-entropy over rows and its gradient with respect to the logits."""
    rows = np.arange(logits.shape[0])
    shifted = logits - logits.max(axis=1, keepdims=True)
    exps = np.exp(shifted)
    sums = exps.sum(axis=1, keepdims=True)
    loss = -(shifted[rows, labels] - np.log(sums[:, 0])).mean()
    grad = exps / sums
    grad[rows, labels] -= 1
    grad /= logits.shape[0]
    return loss, grad


def relu(x):
    return np.maximum(x, 0)


def mlp_step(params, x, labels, lr):
    """W3: one SGD step of a ReLU MLP with softmax cross-entropy; returns the loss."""
    return _mlp_step(params, x, labels, lr, relu, _relu_slope)


def tanh_mlp_step(params, x, labels, lr):
    """W3s: one SGD step of a tanh MLP with softmax cross-entropy; returns the loss."""
    return _mlp_step(params, x, labels, lr, np.tanh, _tanh_slope)


def _relu_slope(h):
    return h > 0


def _tanh_slope(h):
    return 1 - h * h


def _mlp_step(params, x, labels, lr, act, slope):
    """Two hidden layers: forward, the backward pass by hand (``slope`` of the activation
    from its output), then SGD on all six parameters in place."""
    w1, b1, w2, b2, w3, b3 = params
    h1 = act(x @ w1 + b1)
    h2 = act(h1 @ w2 + b2)
    loss, d3 = softmax_xent(h2 @ w3 + b3, labels)
    d2 = (d3 @ w3.T) * slope(h2)
    d1 = (d2 @ w2.T) * slope(h1)
    grads = [x.T @ d1, d1.sum(0), h1.T @ d2, d2.sum(0), h2.T @ d3, d3.sum(0)]
    _sgd(params, grads, lr)
    return loss


def _sgd(params, grads, lr):
    for param, grad in zip(params, grads):
        param -= lr * grad


def logsumexp_rows(x):
    """W6: numerically stable log-sum-exp of each row."""
    top = x.max(axis=1, keepdims=True)
    return np.log(np.exp(x - top).sum(axis=1)) + top[:, 0]


def tanh_chain(x, depth):
    """W7: ``depth`` chained ``tanh(x*0.9 + 0.1)``."""
    for _ in range(depth):
        x = np.tanh(x * 0.9 + 0.1)
    return x


def abs_chain(x, depth):
    """W7 (cheap ops): ``depth`` chained ``abs(x*0.9 - 0.1)``."""
    for _ in range(depth):
        x = np.abs(x * 0.9 - 0.1)
    return x


def conv_valid(x, kernels):
    """NCHW 'valid' cross-correlation, stride 1, through a strided patch view."""
    kh, kw = kernels.shape[2:]
    patches = sliding_window_view(x, (kh, kw), axis=(2, 3))  # b c oh ow kh kw
    out = np.tensordot(patches, kernels, axes=([1, 4, 5], [1, 2, 3]))  # b oh ow f
    return out.transpose(0, 3, 1, 2), patches


def convnet_step(params, x, labels, lr):
    """W8: one SGD step of conv(3x3) -> ReLU -> dense -> softmax cross-entropy."""
    kernels, kbias, dense, dbias = params
    conv, patches = conv_valid(x, kernels)
    act = relu(conv + kbias[None, :, None, None])
    flat = act.reshape(x.shape[0], -1)
    loss, dlogits = softmax_xent(flat @ dense + dbias, labels)
    dact = (dlogits @ dense.T).reshape(act.shape) * (act > 0)
    dkernels = np.tensordot(dact, patches, axes=([0, 2, 3], [0, 2, 3]))
    grads = [dkernels, dact.sum(axis=(0, 2, 3)), flat.T @ dlogits, dlogits.sum(0)]
    _sgd(params, grads, lr)
    return loss


def rnn_loss_and_grads(x, h0, w, u):
    """W9: ``h_t = tanh(x_t @ u + h_{t-1} @ w)``, loss ``mean(h**2)`` over every step, and
    its gradients in ``w`` and ``u`` by backpropagation through time."""
    h, states = h0, [h0]
    for xt in x:
        h = np.tanh(xt @ u + h @ w)
        states.append(h)
    hs = np.stack(states[1:])
    loss = np.mean(hs * hs)
    scale = np.asarray(2 / hs.size, hs.dtype)
    gw, gu, carry = np.zeros_like(w), np.zeros_like(u), np.zeros_like(h0)
    for t in range(len(x) - 1, -1, -1):
        dz = (scale * hs[t] + carry) * (1 - hs[t] * hs[t])
        gu += x[t].T @ dz
        gw += states[t].T @ dz
        carry = dz @ w.T
    return loss, gw, gu
