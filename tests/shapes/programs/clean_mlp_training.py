# expect: clean
# A two-layer MLP with a bias add in each layer and an accuracy measure.
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", 20))
y = sn.tensor("y", shape=("batch",), dtype="int64")
W1 = sn.shared(np.zeros((20, 32)), name="W1")
b1 = sn.shared(np.zeros(32), name="b1")
W2 = sn.shared(np.zeros((32, 3)), name="W2")
b2 = sn.shared(np.zeros(3), name="b2")
h = sn.tanh(x @ W1 + b1)
logits = h @ W2 + b2
loss = sn.mean(sn.crossentropy(sn.softmax(logits), y))
accuracy = sn.mean(sn.equal(sn.argmax(logits, axis=1), y))
grads = sn.grad(loss, [W1, b1, W2, b2])
params = [W1, b1, W2, b2]
train = sn.function(
    [x, y], [loss, accuracy], updates={p: p - 0.01 * g for p, g in zip(params, grads)}
)
for _step in range(50):
    train(np.zeros((16, 20)), np.zeros(16, "int64"))
