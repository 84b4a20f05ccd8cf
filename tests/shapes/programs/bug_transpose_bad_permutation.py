# Swapping the last two axes written with an axis twice.
import symnb as sn

x = sn.tensor("x", shape=("batch", "seq", 16))
y = x.transpose(0, 2, 2)  # expect: ShapeError
