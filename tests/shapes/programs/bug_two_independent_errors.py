# Two unrelated bugs: the checker reports both (it continues past the first statement).
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", 784))
W = sn.shared(np.zeros((10, 784)), name="W")
h = x @ W  # expect: ShapeError
y = sn.tensor("y", shape=("batch",))
v = sn.shared(np.zeros((784, 1)), name="v")
err = x @ v - y  # expect: BroadcastOuterWarning
