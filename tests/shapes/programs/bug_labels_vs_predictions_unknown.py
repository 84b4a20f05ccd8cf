# The same bug with unknown dims (sn.matrix / sn.vector, as Theano tutorials write it).
import numpy as np

import symnb as sn

X = sn.matrix("X")
y = sn.vector("y")
w = sn.shared(np.zeros((5, 1)), name="w")
residual = y - X @ w  # expect: BroadcastOuterWarning
loss = sn.mean(residual**2)
