# Features declared with a name, then multiplied by fixed-size weights.
import numpy as np

import symnb as sn

x = sn.tensor("x", shape=("batch", "features"))
W = sn.shared(np.zeros((784, 10)), name="W")
logits = x @ W  # expect: PinnedDimWarning
