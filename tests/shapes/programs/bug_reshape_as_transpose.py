# Converting batch-major to time-major with reshape instead of transpose.
import symnb as sn

x = sn.tensor("x", shape=("batch", "seq", 16))
time_major = x.reshape(("seq", "batch", 16))  # expect: ReshapeMovesDimWarning
