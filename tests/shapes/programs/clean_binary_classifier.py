# expect: clean
# Binary classification with the shapes made to agree (the column squeezed to a vector).
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", 20))
t = sn.tensor("t", shape=("batch",))
w = sn.shared(np.zeros((20, 1)), name="w")
logit = (x @ w).reshape(-1)
loss = sn.mean(sn.sigmoid_binary_crossentropy(logit, t))
p = sn.sigmoid(logit)
loss2 = sn.mean(sn.binary_crossentropy(p, t))
