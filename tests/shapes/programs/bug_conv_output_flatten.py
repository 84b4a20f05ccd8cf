# A strided convolution on named image sizes, flattened as if it had kept the size.
import symnb as sn

x = sn.tensor("x", shape=("batch", 3, "H", "W"))
w = sn.tensor("w", shape=(8, 3, 3, 3))
h = sn.conv2d(x, w, stride=2, padding=1)
y = sn.tensor("y", shape=("batch", 8, "H", "W"))
out = h + y  # expect: ShapeError
