# expect: clean
# Convolutions on images of named height and width: the sizes stay symbolic and consistent.
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", 3, "H", "W"))
w = sn.tensor("w", shape=(8, 3, 3, 3))
h = sn.conv2d(x, w, stride=2, padding=1)
assert str(sn.infer_shape(h)[2]) == "(H+1)//2"
skip = sn.conv2d(x, w, stride=2, padding=1)
out = h + skip
pooled = sn.mean(out, axis=(2, 3))
f = sn.function([x, w], pooled)
f(np.zeros((2, 3, 9, 12)), np.zeros((8, 3, 3, 3)))
