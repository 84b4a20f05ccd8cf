# Joining features of two different batches side by side.
import symnb as sn

a = sn.tensor("a", shape=("batch", 3))
b = sn.tensor("b", shape=("seq", 4))
both = sn.concatenate([a, b], axis=1)  # expect: ShapeError
