# expect: clean
# Cross-entropy against one-hot targets and label smoothing with a scalar.
import symnb as sn

logits = sn.tensor("logits", shape=("batch", 10))
onehot = sn.tensor("onehot", shape=("batch", 10))
smoothed = onehot * 0.9 + 0.01
loss = sn.mean(sn.categorical_crossentropy(sn.softmax(logits, axis=1), smoothed))
