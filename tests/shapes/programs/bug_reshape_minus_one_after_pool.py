# The same flattening written with -1: the batch dim silently absorbs the size error.
import symnb as sn

x = sn.tensor("x", shape=("batch", 64, 7, 7), dtype="float32")
flat = x.reshape(-1, 64 * 4 * 4)  # expect: ReshapeSplitsDimWarning
