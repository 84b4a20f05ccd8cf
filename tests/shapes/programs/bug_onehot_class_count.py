# One-hot targets for 10 classes against a 5-class output layer.
import symnb as sn

logits = sn.tensor("logits", shape=("batch", 5))
targets = sn.tensor("targets", shape=("batch", 10))
loss = sn.mean(sn.categorical_crossentropy(sn.softmax(logits), targets))  # expect: ShapeError
