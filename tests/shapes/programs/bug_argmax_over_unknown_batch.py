# An unknown number of rows is still the batch: argmax over axis 0 picks an example per class.
import numpy as np

import symnb as sn

images = sn.tensor("images", shape=(None, 28, 28))
W = sn.shared(np.zeros((784, 10)), name="W")
logits = images.reshape((images.shape[0], -1)) @ W
predicted = sn.argmax(logits, axis=0)  # expect: SuspiciousAxisWarning
