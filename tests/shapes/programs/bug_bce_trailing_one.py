# Binary classifier: one sigmoid unit (batch, 1) against targets (batch,).
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", 20))
t = sn.tensor("t", shape=("batch",))
w = sn.shared(np.zeros((20, 1)), name="w")
p = sn.sigmoid(x @ w)
loss = sn.mean(sn.binary_crossentropy(p, t))  # expect: LossTrailingOneWarning
