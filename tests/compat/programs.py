"""Theano-style programs, written as the deeplearning.net tutorials wrote them; only the
two import lines differ from Theano code. Each returns what the tests check."""

import numpy as np

import symnb.compat.theano as theano
import symnb.compat.theano.tensor as T
from symnb.compat.theano.sandbox.rng_mrg import MRG_RandomStreams
from symnb.compat.theano.tensor.shared_randomstreams import RandomStreams
from symnb.compat.theano.tensor.signal import pool


def shared_dataset(data_xy, borrow=True):
    data_x, data_y = data_xy
    shared_x = theano.shared(np.asarray(data_x, dtype=theano.config.floatX), borrow=borrow)
    shared_y = theano.shared(np.asarray(data_y, dtype=theano.config.floatX), borrow=borrow)
    return shared_x, T.cast(shared_y, "int32")


class LogisticRegression:
    def __init__(self, input, n_in, n_out):
        self.W = theano.shared(
            value=np.zeros((n_in, n_out), dtype=theano.config.floatX), name="W", borrow=True
        )
        self.b = theano.shared(
            value=np.zeros((n_out,), dtype=theano.config.floatX), name="b", borrow=True
        )
        self.p_y_given_x = T.nnet.softmax(T.dot(input, self.W) + self.b)
        self.y_pred = T.argmax(self.p_y_given_x, axis=1)
        self.params = [self.W, self.b]
        self.input = input

    def negative_log_likelihood(self, y):
        return -T.mean(T.log(self.p_y_given_x)[T.arange(y.shape[0]), y])

    def errors(self, y):
        if y.ndim != self.y_pred.ndim:
            raise TypeError(
                "y should have the same shape as self.y_pred",
                ("y", y.type, "y_pred", self.y_pred.type),
            )
        if y.dtype.startswith("int"):  # the tutorial's test: Theano's dtypes are strings
            return T.mean(T.neq(self.y_pred, y))
        raise NotImplementedError()


class HiddenLayer:
    def __init__(self, rng, input, n_in, n_out, activation=T.tanh):
        bound = np.sqrt(6.0 / (n_in + n_out))
        W_values = np.asarray(
            rng.uniform(low=-bound, high=bound, size=(n_in, n_out)), dtype=theano.config.floatX
        )
        self.W = theano.shared(value=W_values, name="W", borrow=True)
        self.b = theano.shared(value=np.zeros((n_out,), dtype=theano.config.floatX), name="b")
        self.output = activation(T.dot(input, self.W) + self.b)
        self.params = [self.W, self.b]


def minibatch_trainer(cost, params, x, y, train_set_x, train_set_y, batch_size, learning_rate):
    index = T.lscalar()
    gparams = [T.grad(cost, param) for param in params]
    updates = [(param, param - learning_rate * gparam) for param, gparam in zip(params, gparams)]
    return theano.function(
        inputs=[index],
        outputs=cost,
        updates=updates,
        givens={
            x: train_set_x[index * batch_size : (index + 1) * batch_size],
            y: train_set_y[index * batch_size : (index + 1) * batch_size],
        },
    )


def sgd_logistic(datasets, n_epochs=15, batch_size=50, learning_rate=0.1, mode=None):
    """The tutorial's logistic regression: minibatches by ``givens`` into shared data."""
    (train_set_x, train_set_y), (test_set_x, test_set_y) = datasets
    n_train_batches = train_set_x.get_value(borrow=True).shape[0] // batch_size
    x = T.matrix("x")
    y = T.ivector("y")
    classifier = LogisticRegression(input=x, n_in=64, n_out=10)
    cost = classifier.negative_log_likelihood(y)
    index = T.lscalar()
    g_W = T.grad(cost=cost, wrt=classifier.W)
    g_b = T.grad(cost=cost, wrt=classifier.b)
    updates = {
        classifier.W: classifier.W - learning_rate * g_W,
        classifier.b: classifier.b - learning_rate * g_b,
    }
    train_model = theano.function(
        inputs=[index],
        outputs=cost,
        updates=updates,
        givens={
            x: train_set_x[index * batch_size : (index + 1) * batch_size],
            y: train_set_y[index * batch_size : (index + 1) * batch_size],
        },
        mode=mode,
    )
    test_model = theano.function(
        inputs=[], outputs=classifier.errors(y), givens={x: test_set_x, y: test_set_y}, mode=mode
    )
    losses = []
    for _epoch in range(n_epochs):
        losses.append(np.mean([train_model(i) for i in range(n_train_batches)]))
    return losses, float(test_model())


def mlp(datasets, n_epochs=15, batch_size=20, learning_rate=0.1, n_hidden=32, mode=None):
    (train_set_x, train_set_y), (test_set_x, test_set_y) = datasets
    n_train_batches = train_set_x.get_value(borrow=True).shape[0] // batch_size
    rng = np.random.RandomState(1234)
    x = T.matrix("x")
    y = T.ivector("y")
    hidden = HiddenLayer(rng, input=x, n_in=64, n_out=n_hidden)
    output = LogisticRegression(input=hidden.output, n_in=n_hidden, n_out=10)
    L2_sqr = (hidden.W**2).sum() + (output.W**2).sum()
    cost = output.negative_log_likelihood(y) + 0.0001 * L2_sqr
    params = hidden.params + output.params
    train_model = minibatch_trainer(
        cost, params, x, y, train_set_x, train_set_y, batch_size, learning_rate
    )
    test_model = theano.function([], output.errors(y), givens={x: test_set_x, y: test_set_y})
    for _epoch in range(n_epochs):
        for minibatch_index in range(n_train_batches):
            train_model(minibatch_index)
    return float(test_model())


class dA:
    """The tutorial's denoising autoencoder (tied weights, binomial corruption)."""

    def __init__(
        self,
        numpy_rng,
        theano_rng=None,
        input=None,
        n_visible=64,
        n_hidden=32,
        W=None,
        bhid=None,
        bvis=None,
    ):
        if not theano_rng:
            theano_rng = RandomStreams(numpy_rng.randint(2**30))
        if not W:  # the tutorial's test: a shared variable given by an SdA is true
            initial_W = np.asarray(
                numpy_rng.uniform(
                    low=-4 * np.sqrt(6.0 / (n_hidden + n_visible)),
                    high=4 * np.sqrt(6.0 / (n_hidden + n_visible)),
                    size=(n_visible, n_hidden),
                ),
                dtype=theano.config.floatX,
            )
            W = theano.shared(value=initial_W, name="W", borrow=True)
        if not bvis:
            bvis = theano.shared(np.zeros(n_visible, dtype=theano.config.floatX), name="b'")
        if not bhid:
            bhid = theano.shared(np.zeros(n_hidden, dtype=theano.config.floatX), name="b")
        self.W, self.b, self.b_prime = W, bhid, bvis
        self.W_prime = self.W.T
        self.theano_rng = theano_rng
        self.x = T.dmatrix(name="input") if input is None else input
        self.params = [self.W, self.b, self.b_prime]

    def get_corrupted_input(self, input, corruption_level):
        return (
            self.theano_rng.binomial(
                size=input.shape, n=1, p=1 - corruption_level, dtype=theano.config.floatX
            )
            * input
        )

    def get_hidden_values(self, input):
        return T.nnet.sigmoid(T.dot(input, self.W) + self.b)

    def get_reconstructed_input(self, hidden):
        return T.nnet.sigmoid(T.dot(hidden, self.W_prime) + self.b_prime)

    def get_cost_updates(self, corruption_level, learning_rate):
        tilde_x = self.get_corrupted_input(self.x, corruption_level)
        y = self.get_hidden_values(tilde_x)
        z = self.get_reconstructed_input(y)
        L = -T.sum(self.x * T.log(z) + (1 - self.x) * T.log(1 - z), axis=1)
        cost = T.mean(L)
        gparams = T.grad(cost, self.params)
        updates = [
            (param, param - learning_rate * gparam) for param, gparam in zip(self.params, gparams)
        ]
        return cost, updates


def denoising_autoencoder(train_set_x, n_epochs=10, batch_size=20, mrg=False):
    n_train_batches = train_set_x.get_value(borrow=True).shape[0] // batch_size
    index = T.lscalar()
    x = T.matrix("x")
    rng = np.random.RandomState(123)
    theano_rng = MRG_RandomStreams(rng.randint(2**30)) if mrg else RandomStreams(rng.randint(2**30))
    da = dA(numpy_rng=rng, theano_rng=theano_rng, input=x, n_visible=64, n_hidden=32)
    cost, updates = da.get_cost_updates(corruption_level=0.3, learning_rate=0.1)
    train_da = theano.function(
        [index],
        cost,
        updates=updates,
        givens={x: train_set_x[index * batch_size : (index + 1) * batch_size]},
    )
    reconstructed = da.get_reconstructed_input(da.get_hidden_values(x))
    clean = theano.function(
        [index],
        reconstructed,
        givens={x: train_set_x[index * batch_size : (index + 1) * batch_size]},
    )
    costs = []
    for _epoch in range(n_epochs):
        costs.append(np.mean([train_da(i) for i in range(n_train_batches)]))
    return costs, clean


def rnn_classifier(datasets, n_epochs=8, batch_size=25, n_hidden=24, learning_rate=0.05):
    """Each digit image is a sequence of its 8 rows; a tanh RNN reads them with scan (time
    first: x is (rows, batch, 8)) and the last state is classified."""
    (train_set_x, train_set_y), (test_set_x, test_set_y) = datasets
    n_train_batches = train_set_x.get_value(borrow=True).shape[0] // batch_size
    rng = np.random.RandomState(42)
    x = T.matrix("x")
    y = T.ivector("y")
    seq = x.reshape((x.shape[0], 8, 8)).dimshuffle(1, 0, 2)

    def init(*shape):
        return theano.shared(np.asarray(rng.normal(0, 0.2, shape), theano.config.floatX))

    W_in, W_rec, b_h = init(8, n_hidden), init(n_hidden, n_hidden), init(n_hidden)
    h0 = T.alloc(np.asarray(0.0, dtype=theano.config.floatX), x.shape[0], n_hidden)

    def step(x_t, h_tm1, W_in, W_rec, b_h):
        return T.tanh(T.dot(x_t, W_in) + T.dot(h_tm1, W_rec) + b_h)

    h, _ = theano.scan(step, sequences=seq, outputs_info=[h0], non_sequences=[W_in, W_rec, b_h])
    top = LogisticRegression(input=h[-1], n_in=n_hidden, n_out=10)
    params = [W_in, W_rec, b_h] + top.params
    cost = top.negative_log_likelihood(y)
    train_model = minibatch_trainer(
        cost, params, x, y, train_set_x, train_set_y, batch_size, learning_rate
    )
    test_model = theano.function([], top.errors(y), givens={x: test_set_x, y: test_set_y})
    for _epoch in range(n_epochs):
        for minibatch_index in range(n_train_batches):
            train_model(minibatch_index)
    return float(test_model())


class LeNetConvPoolLayer:
    def __init__(self, rng, input, filter_shape, image_shape, poolsize=(2, 2)):
        assert image_shape[1] == filter_shape[1]
        fan_in = np.prod(filter_shape[1:])
        fan_out = filter_shape[0] * np.prod(filter_shape[2:]) // np.prod(poolsize)
        W_bound = np.sqrt(6.0 / (fan_in + fan_out))
        self.W = theano.shared(
            np.asarray(
                rng.uniform(low=-W_bound, high=W_bound, size=filter_shape),
                dtype=theano.config.floatX,
            ),
            borrow=True,
        )
        b_values = np.zeros((filter_shape[0],), dtype=theano.config.floatX)
        self.b = theano.shared(value=b_values, borrow=True)
        conv_out = T.nnet.conv2d(
            input=input, filters=self.W, filter_shape=filter_shape, input_shape=image_shape
        )
        pooled_out = pool.pool_2d(input=conv_out, ws=poolsize, ignore_border=True)
        self.output = T.tanh(pooled_out + self.b.dimshuffle("x", 0, "x", "x"))
        self.params = [self.W, self.b]


def lenet(datasets, n_epochs=6, batch_size=20, nkerns=8, learning_rate=0.1):
    (train_set_x, train_set_y), (test_set_x, test_set_y) = datasets
    n_train_batches = train_set_x.get_value(borrow=True).shape[0] // batch_size
    n_test = test_set_x.get_value(borrow=True).shape[0]
    rng = np.random.RandomState(23455)
    index = T.lscalar()
    x = T.matrix("x")
    y = T.ivector("y")
    layer0_input = x.reshape((batch_size, 1, 8, 8))
    layer0 = LeNetConvPoolLayer(
        rng,
        input=layer0_input,
        image_shape=(batch_size, 1, 8, 8),
        filter_shape=(nkerns, 1, 3, 3),
        poolsize=(2, 2),
    )
    layer1 = HiddenLayer(rng, input=layer0.output.flatten(2), n_in=nkerns * 3 * 3, n_out=32)
    layer2 = LogisticRegression(input=layer1.output, n_in=32, n_out=10)
    cost = layer2.negative_log_likelihood(y)
    params = layer2.params + layer1.params + layer0.params
    grads = T.grad(cost, params)
    updates = [(p, p - learning_rate * g) for p, g in zip(params, grads)]
    train_model = theano.function(
        [index],
        cost,
        updates=updates,
        givens={
            x: train_set_x[index * batch_size : (index + 1) * batch_size],
            y: train_set_y[index * batch_size : (index + 1) * batch_size],
        },
    )
    test_model = theano.function(
        [index],
        layer2.errors(y),
        givens={
            x: test_set_x[index * batch_size : (index + 1) * batch_size],
            y: test_set_y[index * batch_size : (index + 1) * batch_size],
        },
    )
    for _epoch in range(n_epochs):
        for minibatch_index in range(n_train_batches):
            train_model(minibatch_index)
    return float(np.mean([test_model(i) for i in range(n_test // batch_size)]))


class RBM:
    """The tutorial's restricted Boltzmann machine, trained by persistent contrastive
    divergence: a Gibbs chain in ``theano.scan``, ``consider_constant`` on its end, and the
    pseudo-likelihood as the monitoring cost."""

    def __init__(self, input=None, n_visible=64, n_hidden=32, numpy_rng=None, theano_rng=None):
        self.n_visible, self.n_hidden = n_visible, n_hidden
        if numpy_rng is None:
            numpy_rng = np.random.RandomState(1234)
        if theano_rng is None:
            theano_rng = RandomStreams(numpy_rng.randint(2**30))
        bound = 4 * np.sqrt(6.0 / (n_hidden + n_visible))
        initial_W = np.asarray(
            numpy_rng.uniform(low=-bound, high=bound, size=(n_visible, n_hidden)),
            dtype=theano.config.floatX,
        )
        self.W = theano.shared(value=initial_W, name="W", borrow=True)
        self.hbias = theano.shared(np.zeros(n_hidden, dtype=theano.config.floatX), name="hbias")
        self.vbias = theano.shared(np.zeros(n_visible, dtype=theano.config.floatX), name="vbias")
        self.input = input
        if not input:  # the tutorial's test: a variable given is true
            self.input = T.matrix("input")
        self.theano_rng = theano_rng
        self.params = [self.W, self.hbias, self.vbias]

    def free_energy(self, v_sample):
        wx_b = T.dot(v_sample, self.W) + self.hbias
        vbias_term = T.dot(v_sample, self.vbias)
        hidden_term = T.sum(T.log(1 + T.exp(wx_b)), axis=1)
        return -hidden_term - vbias_term

    def sample_h_given_v(self, v0_sample):
        pre_sigmoid_h1 = T.dot(v0_sample, self.W) + self.hbias
        h1_mean = T.nnet.sigmoid(pre_sigmoid_h1)
        h1_sample = self.theano_rng.binomial(
            size=h1_mean.shape, n=1, p=h1_mean, dtype=theano.config.floatX
        )
        return [pre_sigmoid_h1, h1_mean, h1_sample]

    def sample_v_given_h(self, h0_sample):
        pre_sigmoid_v1 = T.dot(h0_sample, self.W.T) + self.vbias
        v1_mean = T.nnet.sigmoid(pre_sigmoid_v1)
        v1_sample = self.theano_rng.binomial(
            size=v1_mean.shape, n=1, p=v1_mean, dtype=theano.config.floatX
        )
        return [pre_sigmoid_v1, v1_mean, v1_sample]

    def gibbs_hvh(self, h0_sample):
        pre_sigmoid_v1, v1_mean, v1_sample = self.sample_v_given_h(h0_sample)
        pre_sigmoid_h1, h1_mean, h1_sample = self.sample_h_given_v(v1_sample)
        return [pre_sigmoid_v1, v1_mean, v1_sample, pre_sigmoid_h1, h1_mean, h1_sample]

    def get_cost_updates(self, lr=0.1, persistent=None, k=1):
        pre_sigmoid_ph, ph_mean, ph_sample = self.sample_h_given_v(self.input)
        chain_start = ph_sample if persistent is None else persistent
        (_, _, nv_samples, _, _, nh_samples), updates = theano.scan(
            self.gibbs_hvh,
            outputs_info=[None, None, None, None, None, chain_start],
            n_steps=k,
            name="gibbs_hvh",
        )
        chain_end = nv_samples[-1]
        cost = T.mean(self.free_energy(self.input)) - T.mean(self.free_energy(chain_end))
        gparams = T.grad(cost, self.params, consider_constant=[chain_end])
        for gparam, param in zip(gparams, self.params):
            updates[param] = param - gparam * T.cast(lr, dtype=theano.config.floatX)
        updates[persistent] = nh_samples[-1]
        return self.get_pseudo_likelihood_cost(updates), updates

    def get_pseudo_likelihood_cost(self, updates):
        bit_i_idx = theano.shared(value=0, name="bit_i_idx")
        xi = T.round(self.input)
        fe_xi = self.free_energy(xi)
        xi_flip = T.set_subtensor(xi[:, bit_i_idx], 1 - xi[:, bit_i_idx])
        fe_xi_flip = self.free_energy(xi_flip)
        cost = T.mean(self.n_visible * T.log(T.nnet.sigmoid(fe_xi_flip - fe_xi)))
        updates[bit_i_idx] = (bit_i_idx + 1) % self.n_visible
        return cost


def rbm_pcd(train_set_x, n_epochs=4, batch_size=20, n_hidden=32, k=5):
    """PCD-k training of an RBM on binarised digits; the mean monitoring cost per epoch."""
    index, x = T.lscalar(), T.matrix("x")
    rng = np.random.RandomState(123)
    persistent_chain = theano.shared(
        np.zeros((batch_size, n_hidden), dtype=theano.config.floatX), borrow=True
    )
    rbm = RBM(
        input=x,
        n_visible=64,
        n_hidden=n_hidden,
        numpy_rng=rng,
        theano_rng=RandomStreams(rng.randint(2**30)),
    )
    cost, updates = rbm.get_cost_updates(lr=0.1, persistent=persistent_chain, k=k)
    batch = train_set_x[index * batch_size : (index + 1) * batch_size]
    train_rbm = theano.function([index], cost, updates=updates, givens={x: batch})
    n_batches = train_set_x.get_value(borrow=True).shape[0] // batch_size
    return [float(np.mean([train_rbm(i) for i in range(n_batches)])) for _ in range(n_epochs)]
