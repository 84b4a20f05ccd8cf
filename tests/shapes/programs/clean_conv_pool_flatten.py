# expect: clean
# A small CNN: conv, pool, conv, pool, flatten with the right size, dense layer.
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", 1, 28, 28))
w1 = sn.shared(np.zeros((8, 1, 3, 3)), name="w1")
w2 = sn.shared(np.zeros((16, 8, 3, 3)), name="w2")
W = sn.shared(np.zeros((16 * 7 * 7, 10)), name="W")
h = sn.max_pool2d(sn.tanh(sn.conv2d(x, w1, padding="same")), 2)
h = sn.max_pool2d(sn.tanh(sn.conv2d(h, w2, padding="same")), 2)
logits = h.reshape(("batch", 16 * 7 * 7)) @ W
predict = sn.function([x], sn.argmax(logits, axis=-1))
predict(np.zeros((4, 1, 28, 28)))
