# A padding mask (batch, seq) multiplied into embeddings (batch, seq, d) without a new axis.
import symnb as sn

x = sn.tensor("x", shape=("batch", "seq", 16))
mask = sn.tensor("mask", shape=("batch", "seq"))
masked = x * mask  # expect: ShapeError
