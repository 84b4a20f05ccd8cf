# expect: clean
# Token embeddings averaged over the real (unmasked) positions of each sequence.
import numpy as np

import symnb as sn

ids = sn.tensor("ids", shape=("batch", "seq"), dtype="int64")
mask = sn.tensor("mask", shape=("batch", "seq"))
E = sn.shared(np.zeros((1000, 16)), name="E")
vectors = sn.take(E, ids, axis=0)
summed = (vectors * mask[:, :, None]).sum(axis=1)
mean = summed / mask.sum(axis=1, keepdims=True)
f = sn.function([ids, mask], mean)
f(np.zeros((2, 5), "int64"), np.ones((2, 5)))
