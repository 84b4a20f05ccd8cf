# expect: clean
# Layer normalisation over the features, with a learned scale and shift.
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", "seq", 32))
gamma = sn.shared(np.ones(32), name="gamma")
beta = sn.shared(np.zeros(32), name="beta")
mu = x.mean(axis=-1, keepdims=True)
var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
y = (x - mu) / sn.sqrt(var + 1e-5) * gamma + beta
