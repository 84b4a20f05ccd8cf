# Integer labels loaded as a column (batch, 1) for a categorical cross-entropy.
import symnb as sn

p = sn.softmax(sn.tensor("logits", shape=("batch", 10)))
labels = sn.tensor("labels", shape=("batch", 1), dtype="int64")
loss = sn.mean(sn.crossentropy(p, labels))  # expect: ShapeError
