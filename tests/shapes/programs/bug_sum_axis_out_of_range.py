# Summing over the feature axis of what used to be a 3-d tensor.
import symnb as sn

x = sn.tensor("x", shape=("batch", 10))
total = x.sum(axis=2)  # expect: ShapeIndexError
