# Logits declared with the batch size of the data loader; the labels promise a free batch.
import symnb as sn

logits = sn.tensor("logits", shape=(32, 10))
y = sn.tensor("y", shape=("batch",), dtype="int64")
loss = sn.mean(sn.crossentropy(sn.softmax(logits), y))  # expect: PinnedDimWarning
