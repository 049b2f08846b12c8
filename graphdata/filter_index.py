r"""An index of all known true triples, for filtered ranking and filtered negative sampling.

Filtered rank-based evaluation (Bordes et al., "Translating Embeddings for Modeling
Multi-relational Data", NeurIPS 2013; PyKEEN's ``evaluation/ranks.py``) removes from the ranking
of a test triple :math:`(h, r, t)` every other *known* true tail of :math:`(h, r)`, and likewise
every known head of :math:`(r, t)`. With :math:`\mathcal{K}` the known triples (train, valid and
test by default) the index answers, for a batch,

.. math::
    T(h, r) = \{t' : (h, r, t') \in \mathcal{K}\}, \qquad H(r, t) = \{h' : (h', r, t) \in
    \mathcal{K}\}.

It is built once: the composite keys :math:`k = h R + r` (and :math:`k = r E + t` for heads) are
sorted together with the answers (one sort of :math:`k E + t`, or two stable sorts where that
would overflow int64), duplicates removed, and stored in compressed sparse row (CSR)
form: the sorted distinct keys, a pointer array and the concatenated answers. A batch lookup is
one ``torch.searchsorted`` plus a ``repeat_interleave``, with no Python loop over triples, on any
device. Membership :math:`(h, r, t) \in \mathcal{K}` is a second ``searchsorted`` on the sorted
pairs (key position, answer).
"""

from __future__ import annotations

import torch
from torch import Tensor

from graphdata.errors import GraphDataError

__all__ = ["FilterIndex", "stacked_query_keys"]

_INT64_MAX = 2**63 - 1


def _csr(
    key: Tensor, value: Tensor, *, key_bound: int, num_values: int
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Sort (key, value) pairs, drop repeats and return (keys, ptr, values, pair codes).

    ``0 <= key < key_bound`` and ``0 <= value < num_values``.
    """
    if key_bound * num_values <= _INT64_MAX:
        # One sort of the composite key * V + value: sorted, distinct pairs.
        codes = torch.unique(key * num_values + value)
        key, value = codes // num_values, codes % num_values
    else:
        # The composite would overflow int64: two stable sorts (value, then key) give the same
        # lexicographic order, then neighbours that repeat are dropped.
        order = torch.argsort(value, stable=True)
        order = order[torch.argsort(key[order], stable=True)]
        key, value = key[order], value[order]
        if key.numel() > 1:
            keep = torch.ones_like(key, dtype=torch.bool)
            keep[1:] = (key[1:] != key[:-1]) | (value[1:] != value[:-1])
            key, value = key[keep], value[keep]
    keys, counts = torch.unique_consecutive(key, return_counts=True)
    ptr = torch.zeros(keys.numel() + 1, dtype=torch.long, device=key.device)
    ptr[1:] = torch.cumsum(counts, dim=0)
    segment = torch.repeat_interleave(torch.arange(keys.numel(), device=key.device), counts)
    # Segments ascend and values ascend within a segment, so these codes are sorted.
    codes = segment * num_values + value
    return keys, ptr, value, codes


class FilterIndex:
    r"""CSR index of known true triples answering batched "true tails of (h, r)" queries.

    Build it with :meth:`from_triples`. The constructor takes the arrays it produces, which stay
    readable as attributes of the same names: e.g. ``hr_keys`` lists every distinct training
    query :math:`(h, r)` as :math:`hR + r`, ``rt_keys`` every :math:`(r, t)` as :math:`rE + t`.

    Args:
        num_entities: :math:`E`, the number of entities.
        num_relations: :math:`R`, the number of relations.
        hr_keys: Sorted distinct keys :math:`hR + r`, ``[U_hr]``.
        hr_ptr: CSR pointers into ``hr_tails``, ``[U_hr + 1]``.
        hr_tails: Known tails, sorted within each key, ``[K]``.
        hrt_codes: Sorted codes ``position(hR + r) * E + t``, ``[K]``.
        rt_keys: Sorted distinct keys :math:`rE + t`, ``[U_rt]``.
        rt_ptr: CSR pointers into ``rt_heads``, ``[U_rt + 1]``.
        rt_heads: Known heads, sorted within each key, ``[K]``.

    Examples:
        >>> known = torch.tensor([[0, 0, 1], [0, 0, 2], [2, 1, 1]])
        >>> index = FilterIndex.from_triples(known, num_entities=3, num_relations=2)
        >>> index.tails(torch.tensor([0, 1]), torch.tensor([0, 0]))
        (tensor([0, 2, 2]), tensor([1, 2]))
        >>> index.head_coo(torch.tensor([1, 0]), torch.tensor([1, 1]))  # (?, 1, 1) and (?, 0, 1)
        (tensor([0, 1]), tensor([2, 0]))
        >>> index.contains(torch.tensor([[0, 0, 2], [0, 0, 0]]))
        tensor([ True, False])
    """

    #: Largest dense known-answer table (bytes) that :meth:`stacked_score_mask` caches.
    DENSE_MASK_LIMIT = 1 << 25

    def __init__(
        self,
        *,
        num_entities: int,
        num_relations: int,
        hr_keys: Tensor,
        hr_ptr: Tensor,
        hr_tails: Tensor,
        hrt_codes: Tensor,
        rt_keys: Tensor,
        rt_ptr: Tensor,
        rt_heads: Tensor,
    ) -> None:
        self.num_entities = int(num_entities)
        self.num_relations = int(num_relations)
        self.hr_keys, self.hr_ptr, self.hr_tails = hr_keys, hr_ptr, hr_tails
        self.hrt_codes = hrt_codes
        self.rt_keys, self.rt_ptr, self.rt_heads = rt_keys, rt_ptr, rt_heads

    @classmethod
    def from_triples(cls, *mapped: Tensor, num_entities: int, num_relations: int) -> FilterIndex:
        """Build the index from one or more ``LongTensor [N_i, 3]`` of known triples.

        Repeated triples count once. The index lives on the device of the inputs.

        Args:
            *mapped: Mapped triples (head, relation, tail), e.g. train, valid and test.
            num_entities: :math:`E`; entity ids must lie in ``[0, E)``.
            num_relations: :math:`R`; relation ids must lie in ``[0, R)``.

        Returns:
            The index.

        Raises:
            GraphDataError: On a wrong shape or dtype, an id out of range, inputs on different
                devices, or :math:`E R` beyond int64.

        Shapes:
            - mapped: :math:`[N_i, 3]` each.
        """
        if isinstance(num_entities, bool) or not isinstance(num_entities, int) or num_entities < 1:
            raise GraphDataError(f"num_entities: expected a positive int, got {num_entities!r}")
        if (
            isinstance(num_relations, bool)
            or not isinstance(num_relations, int)
            or num_relations < 1
        ):
            raise GraphDataError(f"num_relations: expected a positive int, got {num_relations!r}")
        if num_entities * num_relations > _INT64_MAX:
            raise GraphDataError(
                f"num_entities * num_relations: expected at most 2**63 - 1 for int64 keys, got "
                f"{num_entities} * {num_relations}"
            )
        for i, part in enumerate(mapped):
            if not isinstance(part, Tensor) or part.dim() != 2 or part.shape[1] != 3:
                raise GraphDataError(
                    f"mapped[{i}]: expected a LongTensor [N, 3] (head, relation, tail), got "
                    f"{getattr(part, 'shape', type(part).__name__)}"
                )
            if part.dtype.is_floating_point or part.dtype.is_complex or part.dtype == torch.bool:
                raise GraphDataError(f"mapped[{i}]: expected integer ids, got {part.dtype}")
            if part.device != mapped[0].device:
                raise GraphDataError(
                    f"mapped[{i}]: expected every input on {mapped[0].device}, got {part.device}"
                )
        device = mapped[0].device if mapped else torch.device("cpu")
        triples = (
            torch.cat([part.long() for part in mapped], dim=0)
            if mapped
            else torch.zeros(0, 3, dtype=torch.long)
        )  # [N, 3]
        h, r, t = triples.unbind(dim=1)
        _check_range(h, num_entities, "mapped heads")
        _check_range(r, num_relations, "mapped relations")
        _check_range(t, num_entities, "mapped tails")
        key_bound = num_entities * num_relations
        hr_keys, hr_ptr, tails, hrt_codes = _csr(
            h * num_relations + r, t, key_bound=key_bound, num_values=num_entities
        )
        if hr_keys.numel() * num_entities > _INT64_MAX:
            raise GraphDataError("mapped: too many (head, relation) pairs for int64 pair codes")
        rt_keys, rt_ptr, heads, _ = _csr(
            r * num_entities + t, h, key_bound=key_bound, num_values=num_entities
        )
        return cls(
            num_entities=num_entities,
            num_relations=num_relations,
            hr_keys=hr_keys,
            hr_ptr=hr_ptr,
            hr_tails=tails,
            hrt_codes=hrt_codes,
            rt_keys=rt_keys,
            rt_ptr=rt_ptr,
            rt_heads=heads,
        ).to(device)

    @property
    def device(self) -> torch.device:
        """The device of the index tensors."""
        return self.hr_tails.device

    @property
    def num_triples(self) -> int:
        """The number of distinct known triples."""
        return self.hr_tails.numel()

    def __repr__(self) -> str:
        return (
            f"FilterIndex({self.num_triples} triples, {self.num_entities} entities, "
            f"{self.num_relations} relations, device={self.device})"
        )

    def to(self, device: torch.device | str) -> FilterIndex:
        """Return the index with every tensor moved to ``device``.

        Args:
            device: The target device; queries must then live there too.

        Returns:
            The moved index.
        """
        return FilterIndex(
            num_entities=self.num_entities,
            num_relations=self.num_relations,
            hr_keys=self.hr_keys.to(device),
            hr_ptr=self.hr_ptr.to(device),
            hr_tails=self.hr_tails.to(device),
            hrt_codes=self.hrt_codes.to(device),
            rt_keys=self.rt_keys.to(device),
            rt_ptr=self.rt_ptr.to(device),
            rt_heads=self.rt_heads.to(device),
        )

    def tails(self, head_index: Tensor, rel_type: Tensor) -> tuple[Tensor, Tensor]:
        r"""Return the known tails :math:`T(h_b, r_b)` of each query as CSR ``(ptr, index)``.

        Args:
            head_index: Head ids :math:`h_b`, ``[B]``.
            rel_type: Relation ids :math:`r_b`, ``[B]``.

        Returns:
            ``ptr [B + 1]`` and ``index [nnz]``: the tails of query ``b`` are
            ``index[ptr[b]:ptr[b + 1]]``, ascending.

        Raises:
            GraphDataError: On a non-integer or non-1-D batch, mismatched shapes, an id out of
                range, or a batch on another device than the index.
        """
        ptr, _, position = self._tail_positions(head_index, rel_type)
        return ptr, self.hr_tails[position]

    def heads(self, rel_type: Tensor, tail_index: Tensor) -> tuple[Tensor, Tensor]:
        r"""Return the known heads :math:`H(r_b, t_b)` of each query as CSR ``(ptr, index)``.

        Args:
            rel_type: Relation ids :math:`r_b`, ``[B]``.
            tail_index: Tail ids :math:`t_b`, ``[B]``.

        Returns:
            ``ptr [B + 1]`` and ``index [nnz]``, as for :meth:`tails`.

        Raises:
            GraphDataError: On a non-integer or non-1-D batch, mismatched shapes, an id out of
                range, or a batch on another device than the index.
        """
        ptr, _, position = self._head_positions(rel_type, tail_index)
        return ptr, self.rt_heads[position]

    def tail_coo(self, head_index: Tensor, rel_type: Tensor) -> tuple[Tensor, Tensor]:
        """Return ``(row, col)`` of the known tails in a ``[B, num_entities]`` score matrix.

        ``scores[row, col] = nan`` masks every known triple :math:`(h_b, r_b, t')`; filtered
        ranking then writes the true tail's score back.

        Args:
            head_index: Head ids, ``[B]``.
            rel_type: Relation ids, ``[B]``.

        Returns:
            ``row [nnz]`` (query position) and ``col [nnz]`` (tail id).

        Raises:
            GraphDataError: On a non-integer or non-1-D batch, mismatched shapes, an id out of
                range, or a batch on another device than the index.
        """
        _, row, position = self._tail_positions(head_index, rel_type)
        return row, self.hr_tails[position]

    def head_coo(self, rel_type: Tensor, tail_index: Tensor) -> tuple[Tensor, Tensor]:
        """Return ``(row, col)`` of the known heads in a ``[B, num_entities]`` score matrix.

        Args:
            rel_type: Relation ids, ``[B]``.
            tail_index: Tail ids, ``[B]``.

        Returns:
            ``row [nnz]`` (query position) and ``col [nnz]`` (head id).

        Raises:
            GraphDataError: On a non-integer or non-1-D batch, mismatched shapes, an id out of
                range, or a batch on another device than the index.
        """
        _, row, position = self._head_positions(rel_type, tail_index)
        return row, self.rt_heads[position]

    def both_coo(
        self,
        head_side: tuple[Tensor, Tensor],
        tail_side: tuple[Tensor, Tensor],
        *,
        check: bool = True,
    ) -> tuple[Tensor, Tensor]:
        """Return ``(row, col)`` of the known cells of a stacked both-sides score matrix.

        Filtered evaluation scores the head queries ``(?, r, t)`` and the tail queries
        ``(h, r, ?)`` in one ``[B_h + B_t, num_entities]`` matrix, head rows first. This is
        ``head_coo(*head_side)`` followed by ``tail_coo(*tail_side)`` with its rows shifted by
        ``B_h``, found in one look-up: the head keys :math:`r E + t` and the tail keys
        :math:`h R + r + E R` index one sorted key array.

        Args:
            head_side: ``(rel_type [B_h], tail_index [B_h])``.
            tail_side: ``(head_index [B_t], rel_type [B_t])``.
            check: Validate the ids (types, shapes, device, ranges). ``False`` is for callers
                that validated them already, e.g. once per evaluation instead of per batch;
                out-of-range ids then give wrong rows, not an error. Default True.

        Returns:
            ``row [nnz]`` (row of the stacked matrix) and ``col [nnz]`` (entity id).

        Raises:
            GraphDataError: As :meth:`head_coo` and :meth:`tail_coo`.

        Examples:
            >>> index = FilterIndex.from_triples(
            ...     torch.tensor([[0, 0, 1], [2, 0, 1], [0, 1, 2]]), num_entities=3, num_relations=2
            ... )
            >>> index.both_coo((torch.tensor([0]), torch.tensor([1])),
            ...                (torch.tensor([0, 0]), torch.tensor([1, 0])))
            (tensor([0, 0, 1, 2]), tensor([0, 2, 2, 1]))
        """
        (rel_h, tail_h), (head_t, rel_t) = head_side, tail_side
        if check:
            ent, rel = self._both_ids(rel_h, tail_h, head_t, rel_t)
        else:
            ent, rel = torch.cat([tail_h, head_t]), torch.cat([rel_h, rel_t])
        num_heads, num_keys = rel_h.numel(), self.num_entities * self.num_relations
        key = torch.cat(
            [
                rel[:num_heads] * self.num_entities + ent[:num_heads],
                ent[num_heads:] * self.num_relations + rel[num_heads:] + num_keys,
            ]
        )
        return self.stacked_coo(key)

    def stacked_keys(self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor) -> Tensor:
        r"""Return the stacked query keys of a batch of triples: head queries, then tail queries.

        A head query :math:`(?, r, t)` has key :math:`rE + t \in [0, ER)`, a tail query
        :math:`(h, r, ?)` has key :math:`hR + r + ER \in [ER, 2ER)`: one integer per query of
        either side, so a single ``torch.unique`` finds the distinct queries of both sides
        (head queries sort first) and :meth:`stacked_coo` / :meth:`stacked_score_mask` look up their
        known answers. The ids are not checked.

        Args:
            head_index: Head ids, ``[B]``.
            rel_type: Relation ids in ``[0, num_relations)``, ``[B]``.
            tail_index: Tail ids, ``[B]``.

        Returns:
            ``LongTensor [2B]``: the ``B`` head-query keys, then the ``B`` tail-query keys.

        Examples:
            >>> index = FilterIndex.from_triples(
            ...     torch.tensor([[0, 0, 1]]), num_entities=3, num_relations=2)
            >>> index.stacked_keys(torch.tensor([0]), torch.tensor([1]), torch.tensor([2]))
            tensor([5, 7])
        """
        return stacked_query_keys(
            head_index, rel_type, tail_index, self.num_entities, self.num_relations
        )

    def stacked_coo(self, keys: Tensor) -> tuple[Tensor, Tensor]:
        """Return ``(row, col)``: the known answers of each stacked query key.

        Row ``i`` of the result is query ``keys[i]`` (layout: :meth:`stacked_keys`); its
        known heads (a head query) or tails (a tail query) are the ``col`` entries of that row.
        The keys are not checked: a key outside ``[0, 2ER)`` gives an empty row.

        Args:
            keys: Stacked query keys, ``LongTensor [U]``.

        Returns:
            ``row [nnz]`` and ``col [nnz]`` (entity id).

        Examples:
            >>> index = FilterIndex.from_triples(
            ...     torch.tensor([[0, 0, 1], [2, 0, 1]]), num_entities=3, num_relations=2)
            >>> index.stacked_coo(torch.tensor([1, 6]))  # (?, 0, 1) and (0, 0, ?)
            (tensor([0, 0, 1]), tensor([0, 2, 1]))
        """
        keys_sorted, ptr, values = self._stacked_csr()
        start, count, _, _ = _lookup(keys_sorted, ptr, keys)
        _, row, position = _expand(start, count)
        return row, values[position]

    @property
    def dense_mask_bytes(self) -> int:
        r"""Bytes of the dense known-answer table, :math:`2ER \times E` float32 values."""
        return 4 * 2 * self.num_entities * self.num_relations * self.num_entities

    def has_dense_mask(self) -> bool:
        """Whether :meth:`stacked_score_mask` reads rows of a cached dense table (small graphs).

        The table takes :attr:`dense_mask_bytes`; it is used up to :attr:`DENSE_MASK_LIMIT`
        (32 MiB: UMLS needs 6.7 MB, FB15k-237 would need 400 GB). Above it
        :meth:`stacked_score_mask` builds each mask from :meth:`stacked_coo`.
        """
        return self.dense_mask_bytes <= self.DENSE_MASK_LIMIT

    def stacked_score_mask(self, keys: Tensor) -> tuple[Tensor, Tensor]:
        r"""Return the known answers of each stacked query key as an additive mask and a count.

        The mask is :math:`-\infty` at each known answer and 0 elsewhere, to be added to a score
        matrix (like a float attention mask): ``scores + mask`` filters it in one vectorised
        addition, where ``masked_fill`` with a boolean mask takes ~15x longer on CPU. On a
        small graph (:meth:`has_dense_mask`) the rows are gathered from a dense table built
        once and cached: one ``index_select`` per batch instead of a CSR expansion. The keys are
        not checked (layout: :meth:`stacked_keys`).

        Args:
            keys: Stacked query keys in ``[0, 2ER)``, ``LongTensor [U]``.

        Returns:
            ``mask`` (``FloatTensor [U, num_entities]``: ``-inf`` at each known answer, else
            0) and ``count`` (``LongTensor [U]``, the known answers per key).

        Examples:
            >>> index = FilterIndex.from_triples(
            ...     torch.tensor([[0, 0, 1], [2, 0, 1]]), num_entities=3, num_relations=2)
            >>> index.stacked_score_mask(torch.tensor([1, 6]))  # (?, 0, 1) and (0, 0, ?)
            (tensor([[-inf, 0., -inf],
                    [0., -inf, 0.]]), tensor([2, 1]))
        """
        if self.has_dense_mask():
            table, counts = self._dense_mask()
            return table.index_select(0, keys), counts.index_select(0, keys)
        row, col = self.stacked_coo(keys)
        mask = torch.zeros(keys.numel(), self.num_entities, device=keys.device)
        mask[row, col] = float("-inf")
        return mask, torch.bincount(row, minlength=keys.numel())

    def contains(self, mapped: Tensor) -> Tensor:
        """Return whether each triple is known, e.g. to filter false negatives when sampling.

        Args:
            mapped: Triples (head, relation, tail), ``LongTensor [B, 3]``.

        Returns:
            ``BoolTensor [B]``.

        Raises:
            GraphDataError: On a non-integer or non-1-D batch, mismatched shapes, an id out of
                range, or a batch on another device than the index.
        """
        if not isinstance(mapped, Tensor) or mapped.dim() != 2 or mapped.shape[1] != 3:
            raise GraphDataError(
                f"mapped: expected a LongTensor [B, 3] (head, relation, tail), got "
                f"{getattr(mapped, 'shape', type(mapped).__name__)}"
            )
        h = self._ids(mapped[:, 0], self.num_entities, "mapped heads")
        r = self._ids(mapped[:, 1], self.num_relations, "mapped relations")
        t = self._ids(mapped[:, 2], self.num_entities, "mapped tails")
        _, _, position, found = _lookup(self.hr_keys, self.hr_ptr, h * self.num_relations + r)
        codes = position * self.num_entities + t
        if self.hrt_codes.numel() == 0:
            return found
        at = torch.searchsorted(self.hrt_codes, codes).clamp_(max=self.hrt_codes.numel() - 1)
        return found & (self.hrt_codes[at] == codes)

    def _tail_positions(self, head_index: Tensor, rel_type: Tensor) -> tuple[Tensor, ...]:
        """Return (ptr, row, position into hr_tails) of the known tails of each query."""
        head_index, rel_type = self._pair(head_index, rel_type, ("head_index", "rel_type"))
        key = head_index * self.num_relations + rel_type
        start, count, _, _ = _lookup(self.hr_keys, self.hr_ptr, key)
        return _expand(start, count)

    def _head_positions(self, rel_type: Tensor, tail_index: Tensor) -> tuple[Tensor, ...]:
        """Return (ptr, row, position into rt_heads) of the known heads of each query."""
        tail_index, rel_type = self._pair(tail_index, rel_type, ("tail_index", "rel_type"))
        key = rel_type * self.num_entities + tail_index
        start, count, _, _ = _lookup(self.rt_keys, self.rt_ptr, key)
        return _expand(start, count)

    def _stacked_csr(self) -> tuple[Tensor, Tensor, Tensor]:
        """Head CSR then tail CSR with keys shifted by ``E R``: one sorted key array (cached)."""
        if getattr(self, "_stacked", None) is None:
            shift = self.num_entities * self.num_relations
            self._stacked = (
                torch.cat([self.rt_keys, self.hr_keys + shift]),
                torch.cat([self.rt_ptr, self.hr_ptr[1:] + self.rt_ptr[-1]]),
                torch.cat([self.rt_heads, self.hr_tails]),
            )
        return self._stacked

    def _dense_mask(self) -> tuple[Tensor, Tensor]:
        """The dense ``[2ER, E]`` additive known-answer mask and its row counts (cached)."""
        if getattr(self, "_dense", None) is None:
            keys, ptr, values = self._stacked_csr()
            num_keys = 2 * self.num_entities * self.num_relations
            counts = ptr[1:] - ptr[:-1]
            table = torch.zeros(num_keys, self.num_entities, device=self.device)
            table[torch.repeat_interleave(keys, counts), values] = float("-inf")
            per_key = torch.zeros(num_keys, dtype=torch.long, device=self.device)
            per_key[keys] = counts
            self._dense = (table, per_key)
        return self._dense

    def _both_ids(
        self, rel_h: Tensor, tail_h: Tensor, head_t: Tensor, rel_t: Tensor
    ) -> tuple[Tensor, Tensor]:
        """Checked ``(entities, relations)`` of both sides, head side first, as int64."""
        names = (
            "head_side rel_type",
            "head_side tail_index",
            "tail_side head_index",
            "tail_side rel_type",
        )
        args = (rel_h, tail_h, head_t, rel_t)
        if (
            not all(
                isinstance(x, Tensor)
                and x.dim() == 1
                and x.device == self.device
                and not (x.dtype.is_floating_point or x.dtype.is_complex or x.dtype == torch.bool)
                for x in args
            )
            or rel_h.shape != tail_h.shape
            or head_t.shape != rel_t.shape
        ):
            self._pair(tail_h, rel_h, names[1::-1])  # raises the detailed message
            self._pair(head_t, rel_t, names[2:])
        ent = torch.cat([tail_h, head_t]).long()
        rel = torch.cat([rel_h, rel_t]).long()
        # One range check per kind on the happy path; the per-argument message on failure.
        if ent.numel() and bool(
            ((ent < 0) | (ent >= self.num_entities) | (rel < 0) | (rel >= self.num_relations)).any()
        ):
            self._pair(tail_h, rel_h, names[1::-1])
            self._pair(head_t, rel_t, names[2:])
        return ent, rel

    def _ids(self, ids: Tensor, upper: int, name: str) -> Tensor:
        """Check a 1-D batch of ids in ``[0, upper)`` on this device; return it as int64."""
        if not isinstance(ids, Tensor) or ids.dim() != 1:
            raise GraphDataError(
                f"{name}: expected a 1-D integer tensor [B], got "
                f"{getattr(ids, 'shape', type(ids).__name__)}"
            )
        if ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
            raise GraphDataError(f"{name}: expected integer ids, got {ids.dtype}")
        if ids.device != self.device:
            raise GraphDataError(
                f"{name}: is on {ids.device} but the index is on {self.device}; call "
                f"index.to({str(ids.device)!r})"
            )
        ids = ids.long()
        _check_range(ids, upper, name)
        return ids

    def _pair(
        self, entity: Tensor, relation: Tensor, names: tuple[str, str]
    ) -> tuple[Tensor, Tensor]:
        """Check an (entity ids, relation ids) query batch."""
        if (
            isinstance(entity, Tensor)
            and isinstance(relation, Tensor)
            and (entity.shape != relation.shape)
        ):
            raise GraphDataError(
                f"{names[0]}, {names[1]}: expected the same shape [B], got "
                f"{tuple(entity.shape)} and {tuple(relation.shape)}"
            )
        return (
            self._ids(entity, self.num_entities, names[0]),
            self._ids(relation, self.num_relations, names[1]),
        )


def stacked_query_keys(
    head_index: Tensor, rel_type: Tensor, tail_index: Tensor, num_entities: int, num_relations: int
) -> Tensor:
    r"""Head-query keys :math:`rE + t`, then tail-query keys :math:`hR + r + ER`, ``[2B]``.

    :meth:`FilterIndex.stacked_keys` with explicit sizes, for callers without an index (an
    unfiltered evaluation bounds :math:`R` by its batch's relation ids).

    Examples:
        >>> stacked_query_keys(torch.tensor([0]), torch.tensor([1]), torch.tensor([2]), 3, 2)
        tensor([5, 7])
    """
    return torch.cat(
        [
            rel_type * num_entities + tail_index,
            head_index * num_relations + rel_type + num_entities * num_relations,
        ]
    )


def _check_range(ids: Tensor, upper: int, name: str) -> None:
    if ids.numel() and bool(((ids < 0) | (ids >= upper)).any()):
        raise GraphDataError(
            f"{name}: expected ids in [0, {upper}), got min {int(ids.min())} and max "
            f"{int(ids.max())}"
        )


def _lookup(keys: Tensor, ptr: Tensor, query: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Return (start, count, position, found) of each query key in the sorted distinct ``keys``."""
    if keys.numel() == 0:
        zeros = torch.zeros_like(query)
        return zeros, zeros, zeros, torch.zeros_like(query, dtype=torch.bool)
    position = torch.searchsorted(keys, query).clamp_(max=keys.numel() - 1)
    found = keys[position] == query
    start = ptr[position]
    count = torch.where(found, ptr[position + 1] - start, 0)
    return start, count, position, found


def _expand(start: Tensor, count: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Expand per-query segments into (ptr [B + 1], row [nnz], position [nnz])."""
    ptr = torch.zeros(count.numel() + 1, dtype=torch.long, device=count.device)
    ptr[1:] = torch.cumsum(count, dim=0)
    nnz = int(ptr[-1])  # one device sync: the output size
    row = torch.repeat_interleave(
        torch.arange(count.numel(), device=count.device), count, output_size=nnz
    )
    position = start[row] + torch.arange(nnz, device=count.device) - ptr[row]
    return ptr, row, position
