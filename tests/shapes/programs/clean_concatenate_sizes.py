# expect: clean
# Concatenating two sets of rows: the result has n+m rows, and a matching input is accepted.
import numpy as np

import symnb as sn

a = sn.tensor("a", shape=("n", 3))
b = sn.tensor("b", shape=("m", 3))
both = sn.concatenate([a, b], axis=0)
assert str(sn.infer_shape(both)[0]) == "m+n"
weights = sn.tensor("weights", shape=("n+m",))
total = sn.function([a, b, weights], weights @ both)
total(np.ones((2, 3)), np.ones((4, 3)), np.ones(6))
