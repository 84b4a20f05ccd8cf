# Inputs and labels of different batch sizes (a last partial batch dropped on one side only).
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", 3))
y = sn.tensor("y", shape=("batch",))
loss = sn.function([x, y], sn.mean((x.sum(axis=1) - y) ** 2))
xs, ys = np.ones((100, 3)), np.ones(96)
for start in range(0, 100, 32):
    loss(xs[start : start + 32], ys[start : start + 32])  # expect: InputError
