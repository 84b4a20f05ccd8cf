# expect: clean
# A per-example scale (batch, 1) times features, and a per-feature scale (1, d).
import symnb as sn

x = sn.tensor("x", shape=("batch", "d"))
per_example = sn.tensor("s", shape=("batch", 1))
per_feature = sn.tensor("g", shape=(1, "d"))
y = x * per_example * per_feature
