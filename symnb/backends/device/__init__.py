"""Device backends (``backend="opencl"``, ``backend="cuda"``): one executor of the plan over
one small runtime interface (``runtime.py``), which each device API implements once
(``symnb/backends/opencl/runtime.py``, ``symnb/backends/cuda/runtime.py``)."""
