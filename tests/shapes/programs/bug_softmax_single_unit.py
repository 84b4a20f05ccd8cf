# A binary classifier with one output unit followed by softmax: always 1.0.
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", 20))
w = sn.shared(np.zeros((20, 1)), name="w")
p = sn.softmax(x @ w)  # expect: SuspiciousAxisWarning
