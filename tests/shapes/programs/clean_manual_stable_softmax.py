# expect: clean
# Softmax written by hand: keepdims reductions broadcast back over the rows.
import symnb as sn

logits = sn.tensor("logits", shape=("batch", 10))
shifted = logits - logits.max(axis=1, keepdims=True)
e = sn.exp(shifted)
p = e / e.sum(axis=1, keepdims=True)
log_p = shifted - sn.log(e.sum(axis=-1, keepdims=True))
