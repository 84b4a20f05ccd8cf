# An RNN output in time-major layout (seq, batch, d) mixed with batch-major (batch, seq, d).
import symnb as sn

outputs = sn.tensor("outputs", shape=("seq", "batch", 32))
mask = sn.tensor("mask", shape=("batch", "seq", 1))
masked = outputs * mask  # expect: ShapeError
