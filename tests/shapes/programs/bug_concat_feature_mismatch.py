# Stacking two feature blocks along the rows when their widths differ.
import symnb as sn

a = sn.tensor("a", shape=("n", 3))
b = sn.tensor("b", shape=("m", 4))
both = sn.concatenate([a, b], axis=0)  # expect: ShapeError
