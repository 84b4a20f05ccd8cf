# The examples are called "samples" here; softmax over axis 0 still mixes them.
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("samples", 20))
W = sn.shared(np.zeros((20, 3)), name="W")
p = sn.softmax(x @ W, axis=0)  # expect: SuspiciousAxisWarning
