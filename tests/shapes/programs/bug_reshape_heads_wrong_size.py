# Splitting 64 features into heads of 24: the -1 takes a fraction of the batch.
import symnb as sn

h = sn.tensor("h", shape=("batch", 64))
heads = h.reshape(-1, 24)  # expect: ReshapeSplitsDimWarning
