# expect: clean
# Scalar arithmetic, weight decay over several weight shapes, a learning-rate schedule.
import numpy as np

import symnb as sn

lr = sn.scalar("lr")
W1 = sn.shared(np.zeros((4, 5)), name="W1")
W2 = sn.shared(np.zeros((5, 2)), name="W2")
decay = 1e-4 * ((W1**2).sum() + (W2**2).sum())
step = sn.function([lr], decay, updates={W1: W1 * (1 - lr), W2: W2 * (1 - lr)})
for epoch in range(3):
    step(0.1 / (epoch + 1))
