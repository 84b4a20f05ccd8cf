# expect: clean
# Outer products written explicitly, with length-1 axes on both sides or sn.outer.
import symnb as sn

a = sn.tensor("a", shape=("n",))
b = sn.tensor("b", shape=("m",))
o1 = a[:, None] * b[None, :]
o2 = sn.expand_dims(a, 1) * sn.expand_dims(b, 0)
o3 = sn.outer(a, b)
o4 = a[:, None] * b
