"""Planning every kernel target shares (backend "c" and the device backends): the kernel
linker's walk (``kernel_linker``), convolution and pooling as steps (``convolution``,
``pools``) and what they share (``windowed``). Targets add their own entries to the one plan
table (``symnb.backends.planner.PLANS``) and their capabilities; nothing here is C or a
device's."""
