# expect: clean
# Flattening images with the batch kept by name and with -1; unflattening back.
import symnb as sn

images = sn.tensor("images", shape=("batch", 28, 28))
flat = images.reshape(("batch", 784))
flat2 = images.reshape(-1, 784)
back = flat2.reshape(-1, 28, 28)
assert sn.infer_shape(flat2) == ("batch", 784)
assert sn.infer_shape(back) == ("batch", 28, 28)
