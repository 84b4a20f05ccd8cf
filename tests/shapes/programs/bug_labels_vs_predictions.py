# Regression loss: predictions (batch, 1) minus labels (batch,) silently becomes (batch, batch).
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", 13))
y = sn.tensor("y", shape=("batch",))
w = sn.shared(np.zeros((13, 1)), name="w")
pred = x @ w
loss = sn.mean((pred - y) ** 2)  # expect: BroadcastOuterWarning
