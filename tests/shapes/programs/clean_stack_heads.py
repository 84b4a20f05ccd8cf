# expect: clean
# Stacking and concatenating head outputs of the same shape.
import symnb as sn

a = sn.tensor("a", shape=("batch", 10))
b = sn.tensor("b", shape=("batch", 10))
stacked = sn.stack([a, b])
mean_head = stacked.mean(axis=0)
side_by_side = sn.concatenate([a, b], axis=1)
assert sn.infer_shape(side_by_side) == ("batch", 20)
