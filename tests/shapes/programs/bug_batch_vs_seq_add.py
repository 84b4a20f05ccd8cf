# Positional encodings laid out (seq, d) added to activations laid out (batch, d).
import symnb as sn

h = sn.tensor("h", shape=("batch", 64))
pos = sn.tensor("pos", shape=("seq", 64))
out = h + pos  # expect: ShapeError
