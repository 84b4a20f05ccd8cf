# A flatten written with the batch size of the first experiment: fine for 32 images, wrong later.
import numpy as np

import symnb as sn

images = sn.tensor("images", shape=("batch", 28, 28))
labels = sn.tensor("labels", shape=("batch",), dtype="int64")
W = sn.shared(np.zeros((784, 10)), name="W")
flat = images.reshape((32, -1))  # expect: PinnedDimWarning
p = sn.softmax(flat @ W)
loss = sn.mean(sn.crossentropy(p, labels))  # expect: PinnedDimWarning
