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


def conv_valid_grad_input(dout, kernels, x_shape):
    """The input gradient of :func:`conv_valid`: each tap's contribution added back."""
    dx = np.zeros(x_shape, dout.dtype)
    kh, kw = kernels.shape[2:]
    oh, ow = dout.shape[2:]
    for i in range(kh):
        for j in range(kw):
            dx[:, :, i : i + oh, j : j + ow] += np.tensordot(
                dout, kernels[:, :, i, j], ([1], [0])
            ).transpose(0, 3, 1, 2)
    return dx


def max_pool2(x):
    """2x2 max-pool (stride 2) and the mask of each window's first maximum."""
    n, c, h, w = x.shape
    windows = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5)
    flat = windows.reshape(n, c, h // 2, w // 2, 4)
    first = np.argmax(flat, axis=-1)
    mask = np.arange(4) == first[..., None]
    return flat.max(axis=-1), mask


def max_pool2_grad(dout, mask):
    n, c, oh, ow, _ = mask.shape
    windows = (mask * dout[..., None]).reshape(n, c, oh, ow, 2, 2)
    return windows.transpose(0, 1, 2, 4, 3, 5).reshape(n, c, oh * 2, ow * 2)


def convnet2_step(params, x, labels, lr):
    """W8b: one SGD step of conv3x3 -> ReLU -> conv3x3 -> ReLU -> max-pool 2x2 -> dense."""
    k1, b1, k2, b2, dense, dbias = params
    conv1, patches1 = conv_valid(x, k1)
    act1 = relu(conv1 + b1[None, :, None, None])
    conv2, patches2 = conv_valid(act1, k2)
    act2 = relu(conv2 + b2[None, :, None, None])
    pooled, mask = max_pool2(act2)
    flat = pooled.reshape(x.shape[0], -1)
    loss, dlogits = softmax_xent(flat @ dense + dbias, labels)
    dact2 = max_pool2_grad((dlogits @ dense.T).reshape(pooled.shape), mask) * (act2 > 0)
    dk2 = np.tensordot(dact2, patches2, axes=([0, 2, 3], [0, 2, 3]))
    dact1 = conv_valid_grad_input(dact2, k2, act1.shape) * (act1 > 0)
    dk1 = np.tensordot(dact1, patches1, axes=([0, 2, 3], [0, 2, 3]))
    grads = [
        dk1,
        dact1.sum(axis=(0, 2, 3)),
        dk2,
        dact2.sum(axis=(0, 2, 3)),
        flat.T @ dlogits,
        dlogits.sum(0),
    ]
    _sgd(params, grads, lr)
    return loss
