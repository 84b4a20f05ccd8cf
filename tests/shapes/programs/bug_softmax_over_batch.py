# Softmax over axis 0, as for column vectors in a textbook: it normalises across examples.
import symnb as sn

logits = sn.tensor("logits", shape=("batch", 10))
p = sn.softmax(logits, axis=0)  # expect: SuspiciousAxisWarning
