"""The kernel description: what a kernel computes, in no language.

``ir`` holds the data (operands, SSA scalar values naming ops from one vocabulary, and the three
loop structures: a map, a reduction, and row programs), ``build`` turns graph nodes into it, and
``lowering`` registers, per op class, how a node becomes a kernel. The renderers in
``symnb/backends/render`` turn a description into C, OpenCL C or CUDA C.
"""
