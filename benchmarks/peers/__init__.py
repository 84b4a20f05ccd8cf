"""The peers: one module per library, each a ``Peer`` class with a builder per workload.

A peer module imports its library at the top, so loading it fails with ImportError when the
library is absent; ``load`` turns a peer name into a ready ``Peer``.
"""

from __future__ import annotations

import importlib
import os

# peer name -> (module, keyword arguments of its Peer class)
EXTERNAL = {
    "numpy": ("benchmarks.peers.numpy_peer", {}),
    "numpy (out=)": ("benchmarks.peers.numpy_peer", {"out": True}),
    "numexpr": ("benchmarks.peers.numexpr_peer", {}),
    "numexpr (out=)": ("benchmarks.peers.numexpr_peer", {"out": True}),
    "pytensor (numba)": ("benchmarks.peers.pytensor_peer", {"mode": "NUMBA"}),
    "pytensor (cvm)": ("benchmarks.peers.pytensor_peer", {"mode": "CVM"}),
    "jax": ("benchmarks.peers.jax_peer", {}),
    "torch": ("benchmarks.peers.torch_peer", {"compiled": False}),
    "torch (out=)": ("benchmarks.peers.torch_peer", {"compiled": False, "out": True}),
    "torch.compile": ("benchmarks.peers.torch_peer", {"compiled": True}),
}
# Rows that write into a caller's buffer: shown beside the headline rows, never as the
# fastest, and left out of a workload they have no version of (see is_variant).
OUT_SUFFIX = " (out=)"
SYMNB_PREFIX = "symnb-"
# ``--baseline REV``: symnb of another commit, backend "c", in a worker of its own whose path
# puts that tree's symnb first (benchmarks/baseline.py).
BASE_PEER = "symnb-base"
# ``--one-thread``: the same peer in a worker with every thread pool at one thread, pinned to
# one core (benchmarks/load.py).
ONE_THREAD_SUFFIX = " [1 thread]"


def symnb_peers() -> list[str]:
    """One peer per backend registered in ``symnb.backends.LINKERS``, picked up as they land.

    If symnb itself fails to import, its reference backend is still listed, so its worker
    reports the import error in the table instead of the whole run failing.
    """
    try:
        from symnb.backends import LINKERS
    except Exception:  # noqa: BLE001 - any import failure is reported by the worker
        return [SYMNB_PREFIX + "py"]
    return [SYMNB_PREFIX + name for name in LINKERS]


def all_peers() -> list[str]:
    return symnb_peers() + list(EXTERNAL)


def is_symnb(peer: str) -> bool:
    return peer.startswith(SYMNB_PREFIX)


def is_variant(peer: str) -> bool:
    """An ``out=`` row: not a headline, not counted as the fastest."""
    return peer.endswith(OUT_SUFFIX)


def is_one_thread(peer: str) -> bool:
    return peer.endswith(ONE_THREAD_SUFFIX)


def one_thread(peer: str) -> str:
    """The name of ``peer``'s one-thread twin: ``symnb-c [1 thread]``."""
    return peer + ONE_THREAD_SUFFIX


def plain(peer: str) -> str:
    """The peer a one-thread twin runs: ``symnb-c`` for ``symnb-c [1 thread]``."""
    return peer.removesuffix(ONE_THREAD_SUFFIX)


def is_baseline(peer: str) -> bool:
    """symnb of the ``--baseline`` commit (also on one thread)."""
    return plain(peer) == BASE_PEER


def is_headline(peer: str) -> bool:
    """A row that may be the fastest or the best symnb one: the peers as their users run them,
    on this tree; not an ``out=`` row, a one-thread twin or the baseline commit."""
    return not (is_variant(peer) or is_one_thread(peer) or is_baseline(peer))


def load(peer: str):
    """The ``Peer`` object for a name such as ``numpy``, ``torch.compile`` or ``symnb-c``."""
    peer = plain(peer)
    if is_baseline(peer):
        module, kwargs = "benchmarks.peers.symnb_peer", {"backend": "c", "name": BASE_PEER}
    elif is_symnb(peer):
        module, kwargs = "benchmarks.peers.symnb_peer", {"backend": peer[len(SYMNB_PREFIX) :]}
    elif peer in EXTERNAL:
        module, kwargs = EXTERNAL[peer]
    else:
        raise ValueError(f"unknown peer {peer!r}; known: {all_peers()}")
    return importlib.import_module(module).Peer(**kwargs)


def cache_env(peer: str, directory: str) -> dict:
    """Environment variables pointing a peer's compile cache at ``directory`` (for W5).

    Kept here rather than on the peer classes so the parent process never imports the peers'
    libraries.
    """
    join = os.path.join
    pytensor = {  # base_compiledir: PyTensor 3 keeps its Numba cache there, not in compiledir
        "PYTENSOR_FLAGS": f"base_compiledir={join(directory, 'pytensor')}",
        "NUMBA_CACHE_DIR": join(directory, "numba"),
    }
    tables = {
        "pytensor (numba)": pytensor,
        "pytensor (cvm)": pytensor,
        "jax": {
            "JAX_COMPILATION_CACHE_DIR": directory,
            "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
            "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
        },
        "torch.compile": {
            "TORCHINDUCTOR_CACHE_DIR": join(directory, "inductor"),
            "TRITON_CACHE_DIR": join(directory, "triton"),
        },
    }
    return tables.get(peer, {})
