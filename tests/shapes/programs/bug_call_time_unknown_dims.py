# Dims left unknown: the clash only shows when the training loop passes real arrays.
import numpy as np

import symnb as sn

X = sn.matrix("X")
w = sn.vector("w")
predict = sn.function([X, w], X @ w)
features = np.ones((100, 5))
weights = np.ones(4)
for _step in range(10):
    predict(features, weights)  # expect: ShapeError
