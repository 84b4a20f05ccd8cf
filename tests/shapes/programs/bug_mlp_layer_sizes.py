# A two-layer MLP whose second weight matrix was sized for a 128-unit hidden layer.
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", 784), dtype="float32")
W1 = sn.shared(np.zeros((784, 256), "float32"), name="W1")
W2 = sn.shared(np.zeros((128, 10), "float32"), name="W2")
h = sn.tanh(x @ W1)
logits = h @ W2  # expect: ShapeError
