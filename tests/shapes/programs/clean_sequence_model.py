# expect: clean
# A batch-major sequence layer: a projection, a bias, a mean over time.
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", "seq", 16))
W = sn.shared(np.zeros((16, 32)), name="W")
b = sn.shared(np.zeros(32), name="b")
h = sn.tanh(x @ W + b)
pooled = h.mean(axis=1)
time_major = x.transpose(1, 0, 2)
merged = x.reshape(-1, 16) @ W
f = sn.function([x], [pooled, merged])
f(np.zeros((4, 7, 16)))
