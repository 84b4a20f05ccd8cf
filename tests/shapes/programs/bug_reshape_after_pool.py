# Flattening after two poolings, sized as if there had been three (7x7 became 4x4 on paper).
import symnb as sn

x = sn.tensor("x", shape=("batch", 1, 28, 28), dtype="float32")
w = sn.tensor("w", shape=(64, 1, 3, 3), dtype="float32")
h = sn.max_pool2d(sn.conv2d(x, w, padding="same"), 2)
h = sn.max_pool2d(h, 2)
flat = h.reshape(("batch", 64 * 4 * 4))  # expect: ShapeError
