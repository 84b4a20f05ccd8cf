# expect: clean
# Standardising features with statistics over the batch (a reduction over axis 0 is fine).
import symnb as sn

x = sn.tensor("x", shape=("batch", 8))
centered = x - x.mean(axis=0)
scaled = centered / (x.std(axis=0) + 1e-6)
row_norm = x / sn.sqrt((x**2).sum(axis=1, keepdims=True))
