# Predicted classes taken along the wrong axis.
import symnb as sn

logits = sn.tensor("logits", shape=("batch", 10))
predicted = sn.argmax(logits, axis=0)  # expect: SuspiciousAxisWarning
