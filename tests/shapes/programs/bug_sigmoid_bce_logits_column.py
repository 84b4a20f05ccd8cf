# The stable loss on logits, with the same column/vector mismatch.
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", 20))
t = sn.tensor("t", shape=("batch",))
w = sn.shared(np.zeros((20, 1)), name="w")
loss = sn.mean(sn.sigmoid_binary_crossentropy(x @ w, t))  # expect: LossTrailingOneWarning
