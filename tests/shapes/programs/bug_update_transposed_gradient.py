# A hand-written update that transposes the gradient of W.
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", 4))
W = sn.shared(np.zeros((4, 3)), name="W")
loss = sn.sum(x @ W)
(gW,) = sn.grad(loss, [W])
train = sn.function([x], loss, updates={W: W - 0.1 * gW.T})  # expect: ShapeError
