"""``theano.sparse``: Theano's sparse matrices, which symnb does not have.

``theano.sparse.enable_sparse`` is False, as Theano set it when SciPy was missing, so code
that checks it takes its dense path; reading any other name is an error naming the dense
alternative.
"""

#: Theano's flag for "sparse matrices are available" (False without SciPy, and here)
enable_sparse = False


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(
        f"theano.sparse.{name}: symnb's Theano layer has no sparse matrices; use dense "
        "tensors (T.matrix, and a SciPy sparse matrix's .toarray() as the value) with T.dot, "
        "or index the rows you need (W[indices]) instead of a sparse product"
    )
