# A dense layer whose weights were stored as (out, in), as PyTorch's nn.Linear keeps them.
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", 784), dtype="float32")
W = sn.shared(np.zeros((10, 784), "float32"), name="W")
logits = x @ W  # expect: ShapeError
