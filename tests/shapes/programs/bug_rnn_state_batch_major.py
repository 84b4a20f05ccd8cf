# The RNN state initialised per time step instead of per example.
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", "seq", 8))
Wx = sn.shared(np.zeros((8, 16)), name="Wx")
h0 = sn.tensor("h0", shape=("seq", 16))
h = sn.tanh(x[:, 0, :] @ Wx + h0)  # expect: ShapeError
