# A fixed-size reshape off by one row of pixels.
import symnb as sn

images = sn.tensor("images", shape=(32, 28, 28), dtype="float32")
flat = images.reshape(32, 28 * 27)  # expect: ShapeError
