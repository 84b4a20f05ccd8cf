"""CUDA: the kernel description rendered as CUDA C (dialect.py), compiled by NVRTC."""
