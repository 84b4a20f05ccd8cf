# Accuracy with labels kept as a column: argmax (batch,) == labels (batch, 1) is (batch, batch).
import symnb as sn

logits = sn.tensor("logits", shape=("batch", 10))
labels = sn.tensor("labels", shape=("batch", 1), dtype="int64")
hits = sn.equal(sn.argmax(logits, axis=1), labels)  # expect: BroadcastOuterWarning
accuracy = sn.mean(hits)
