# Attention scores q @ k without transposing k: the seq dim of k is pinned to 64.
import symnb as sn

q = sn.tensor("q", shape=("batch", "seq", 64))
k = sn.tensor("k", shape=("batch", "seq", 64))
scores = q @ k  # expect: PinnedDimWarning
