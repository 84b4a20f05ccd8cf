# expect: clean
# Logistic regression on MNIST-sized inputs, trained for a few epochs.
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", 784), dtype="float32")
y = sn.tensor("y", shape=("batch",), dtype="int64")
W = sn.shared(np.zeros((784, 10), "float32"), name="W")
b = sn.shared(np.zeros(10, "float32"), name="b")
p = sn.softmax(x @ W + b, axis=-1)
loss = sn.mean(sn.crossentropy(p, y))
gW, gb = sn.grad(loss, [W, b])
train = sn.function([x, y], loss, updates={W: W - 0.1 * gW, b: b - 0.1 * gb})
data, labels = np.zeros((256, 784), "float32"), np.zeros(256, "int64")
for _epoch in range(5):
    for start in range(0, 256, 64):
        train(data[start : start + 64], labels[start : start + 64])
