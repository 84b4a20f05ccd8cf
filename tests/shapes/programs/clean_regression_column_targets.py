# expect: clean
# Regression with targets given as a column, like the predictions.
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", 13))
y = sn.tensor("y", shape=("batch", 1))
w = sn.shared(np.zeros((13, 1)), name="w")
loss = sn.mean((x @ w - y) ** 2)
