# expect: clean
# Theano-style code with unknown dims everywhere, called with several batch sizes.
import numpy as np

import symnb as sn

X = sn.matrix("X")
y = sn.vector("y")
w = sn.shared(np.zeros(5), name="w")
b = sn.shared(0.0, name="b")
pred = X @ w + b
loss = sn.mean((pred - y) ** 2)
gw, gb = sn.grad(loss, [w, b])
step = sn.function([X, y], loss, updates={w: w - 0.1 * gw, b: b - 0.1 * gb})
for n in (10, 7, 3):
    step(np.ones((n, 5)), np.ones(n))
