# expect: clean
# Two poolings by 2 on one path, one pooling by 4 on the other, added (sizes agree symbolically).
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", 3, "H", "W"))
twice = sn.max_pool2d(sn.max_pool2d(x, 2), 2)
once = sn.avg_pool2d(x, 4)
both = twice + once
f = sn.function([x], both.mean(axis=(2, 3)))
f(np.zeros((2, 3, 17, 9)))
