# Softmax over axis 2 of a 2-d logits matrix (copied from a sequence model).
import symnb as sn

logits = sn.tensor("logits", shape=("batch", 10))
p = sn.softmax(logits, axis=2)  # expect: ShapeIndexError
