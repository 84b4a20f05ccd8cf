# "Transposing" a (batch, 3) matrix with reshape.
import symnb as sn

x = sn.tensor("x", shape=("batch", 3))
xt = x.reshape((3, "batch"))  # expect: ReshapeMovesDimWarning
