# expect: clean
# Scaled dot-product attention, softmax over the keys.
import symnb as sn

q = sn.tensor("q", shape=("batch", "seq", 64))
k = sn.tensor("k", shape=("batch", "seq", 64))
v = sn.tensor("v", shape=("batch", "seq", 64))
scores = q @ k.transpose(0, 2, 1) / 8.0
weights = sn.softmax(scores, axis=-1)
context = weights @ v
