"""Softmax (multinomial logistic) regression on scikit-learn's digits, trained by symnb.

`sn.grad` builds the gradient graph of the loss; the SGD updates use it.
"""

import numpy as np
from sklearn.datasets import load_digits

import symnb as sn


def load(seed=0):
    """Digits scaled to [0, 1], one-hot labels, split 80/20."""
    data = load_digits()
    x = (data.data / 16.0).astype("float32")
    onehot = np.eye(10, dtype="float32")[data.target]
    order = np.random.default_rng(seed).permutation(len(x))
    cut = int(0.8 * len(x))
    train, test = order[:cut], order[cut:]
    return (x[train], onehot[train]), (x[test], data.target[test])


def build(lr=0.5):
    """The training step (loss + SGD updates) and the prediction function."""
    x = sn.tensor("x", shape=("batch", 64), dtype="float32")
    y = sn.tensor("y", shape=("batch", 10), dtype="float32")
    W = sn.shared(np.zeros((64, 10), "float32"), name="W")
    b = sn.shared(np.zeros(10, "float32"), name="b")

    z = x @ W + b
    e = sn.exp(z - sn.max(z, axis=1, keepdims=True))
    p = e / sn.sum(e, axis=1, keepdims=True)
    loss = -sn.mean(sn.sum(y * sn.log(p), axis=1))

    gW, gb = sn.grad(loss, [W, b])
    train = sn.function([x, y], loss, updates={W: W - lr * gW, b: b - lr * gb}, name="train")
    predict = sn.function([x], p, name="predict")
    return train, predict


def main(epochs=30, batch=64):
    (x_train, y_train), (x_test, labels) = load()
    train, predict = build()
    for epoch in range(epochs):
        for i in range(0, len(x_train), batch):
            loss = train(x_train[i : i + batch], y_train[i : i + batch])
        if epoch % 5 == 0 or epoch == epochs - 1:
            accuracy = np.mean(np.argmax(predict(x_test), axis=1) == labels)
            print(f"epoch {epoch:2d}  loss {float(loss):.4f}  test accuracy {accuracy:.3f}")
    return accuracy


if __name__ == "__main__":
    main()
