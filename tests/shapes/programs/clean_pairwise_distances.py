# expect: clean
# Pairwise squared distances between the rows of x, with explicit broadcasting axes.
import symnb as sn

x = sn.tensor("x", shape=("n", 3))
diff = sn.expand_dims(x, 1) - sn.expand_dims(x, 0)
d2 = (diff**2).sum(axis=-1)
sq = (x**2).sum(axis=1)
d2_gram = sq[:, None] + sq[None, :] - 2 * x @ x.T
