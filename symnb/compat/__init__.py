"""Compatibility layers: code written for other libraries, run on symnb's engine.

``import symnb.compat.theano as theano`` (and ``import symnb.compat.theano.tensor as T``)
runs Theano programs with only their import lines changed; see docs/theano.md.
"""
