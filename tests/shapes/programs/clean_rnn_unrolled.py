# expect: clean
# A vanilla RNN unrolled over a fixed number of steps.
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", 5, 8))
Wx = sn.shared(np.zeros((8, 16)), name="Wx")
Wh = sn.shared(np.zeros((16, 16)), name="Wh")
b = sn.shared(np.zeros(16), name="b")
h = sn.zeros_like(x[:, 0, :] @ Wx)
for t in range(5):
    h = sn.tanh(x[:, t, :] @ Wx + h @ Wh + b)
run = sn.function([x], h)
run(np.zeros((3, 5, 8)))
