# A named width broadcast against a fixed-size scale vector.
import numpy as np

import symnb as sn

h = sn.tensor("h", shape=("batch", "hidden"))
scale = sn.shared(np.ones(128), name="scale")
out = h * scale  # expect: PinnedDimWarning
