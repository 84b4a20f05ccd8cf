# A bias vector sized for the hidden layer, added to the output layer.
import numpy as np

import symnb as sn

h = sn.tensor("h", shape=("batch", 10))
b = sn.shared(np.zeros(20), name="b")
out = h + b  # expect: ShapeError
