# Log-softmax over axis 1 of a (seq, batch, vocab) tensor, thinking it was batch-major.
import symnb as sn

logits = sn.tensor("logits", shape=("seq", "batch", 100))
logp = sn.log_softmax(logits, axis=1)  # expect: SuspiciousAxisWarning
