# Stacking the outputs of two heads whose widths differ.
import symnb as sn

a = sn.tensor("a", shape=("batch", 10))
b = sn.tensor("b", shape=("batch", 12))
both = sn.stack([a, b])  # expect: ShapeError
