"""``.h5ad`` files: read with one clear error, write atomically after asking for the room.

:func:`read_h5ad` turns a file that is not a readable AnnData file into one
:class:`~graphdata.errors.GraphDataError` naming it; :func:`write_h5ad` asks for room first
(:func:`estimate_h5ad_bytes`), because h5py crashes the interpreter on a full disk (the
``graphlib spatial`` commands and ``examples/celcomen_scc.py`` use them).
"""

from __future__ import annotations

from pathlib import Path

import anndata
import numpy as np
import scipy.sparse

from graphdata import atomic
from graphdata.atomic import atomic_path
from graphdata.errors import GraphDataError

__all__ = ["H5AD_MARGIN_BYTES", "estimate_h5ad_bytes", "read_h5ad", "write_h5ad"]

#: Room asked for beyond the arrays' bytes: HDF5 metadata, obs/var tables, ``uns`` (bytes).
H5AD_MARGIN_BYTES = 4 * 2**20


def _array_bytes(value: object) -> int:
    """Bytes of a dense or sparse array (0 for anything else, e.g. a DataFrame in obsm)."""
    if scipy.sparse.issparse(value):
        return sum(
            int(getattr(value, name).nbytes)
            for name in ("data", "indices", "indptr", "row", "col")
            if hasattr(value, name)
        )
    nbytes = getattr(value, "nbytes", None)
    return int(nbytes) if isinstance(nbytes, (int, np.integer)) else 0


def estimate_h5ad_bytes(adata: anndata.AnnData) -> int:
    """An upper estimate of the bytes ``adata.write_h5ad`` writes, uncompressed.

    Sums ``X``, ``layers``, ``obsm``, ``obsp``, ``varm`` and ``varp`` (sparse matrices by their
    ``data``/``indices``/``indptr``), adds 10 % and :data:`H5AD_MARGIN_BYTES` for the metadata,
    the obs/var tables and ``uns``.

    Args:
        adata: The object about to be written.

    Returns:
        The estimate in bytes.

    Examples:
        >>> adata = anndata.AnnData(np.zeros((100, 10), dtype=np.float32))
        >>> estimate_h5ad_bytes(adata) - H5AD_MARGIN_BYTES
        4400
    """
    arrays = [adata.X]
    for mapping in (adata.layers, adata.obsm, adata.obsp, adata.varm, adata.varp):
        arrays.extend(mapping[key] for key in mapping.keys())
    total = sum(_array_bytes(a) for a in arrays if a is not None)
    return int(total * 1.1) + H5AD_MARGIN_BYTES


def read_h5ad(path: str | Path, *, argument: str = "input") -> anndata.AnnData:
    """Read an ``.h5ad`` file; a file that is not one ends with a GraphDataError naming it.

    The file is opened once first so that a missing or unreadable file raises the usual
    :class:`OSError` with its name (h5py's own errors carry neither errno nor file name).

    Args:
        path: The file.
        argument: The argument that named it, for the message. Default ``"input"``.

    Returns:
        The AnnData object.

    Raises:
        OSError: If the file is missing, a folder, or not readable by this user.
        GraphDataError: If it is not HDF5, is truncated, or is not an AnnData file.
    """
    open(path, "rb").close()  # a missing, folder or unreadable path: its own OSError, named
    try:
        return anndata.read_h5ad(path)
    except GraphDataError:
        raise
    # h5py reports a bad signature or a truncated file as a bare OSError; anndata reports a
    # foreign HDF5 layout as KeyError/ValueError/TypeError.
    except (OSError, KeyError, ValueError, TypeError, RuntimeError, AttributeError) as err:
        raise GraphDataError(
            f"{argument}: {str(path)!r} is not a readable .h5ad file ({type(err).__name__}: "
            f"{err}); it may be truncated or not an AnnData file: pass a file written by "
            "anndata (e.g. `graphlib spatial simulate --out FILE.h5ad`)"
        ) from err


def write_h5ad(adata: anndata.AnnData, path: str | Path) -> None:
    """Write ``adata`` to ``path`` atomically (temporary file in the same folder, then rename).

    First asks :func:`graphdata.atomic.require_free_space` for :func:`estimate_h5ad_bytes` in the
    folder: h5py crashes the interpreter on a full disk instead of raising.

    Args:
        adata: The object to write.
        path: The ``.h5ad`` file.

    Raises:
        OSError: ``ENOSPC`` if the folder lacks room for the estimate.
    """
    atomic.require_free_space(path, estimate_h5ad_bytes(adata), what=f"the .h5ad file {path}")
    with atomic_path(path, suffix=".h5ad") as tmp:
        adata.write_h5ad(tmp)
