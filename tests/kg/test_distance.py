"""kg._distance: the fused gathered distance against plain autograd, and its workspace."""

from __future__ import annotations

import pytest
import torch

from graphdata.errors import GraphDataError
from kg._distance import DISTANCES, Workspace, gathered_distance


def _reference(queries, qi, entities, ei, kind):
    diff = queries[qi] - entities[ei]
    if kind == "l1":
        return diff.abs().sum(-1)
    if kind == "l2":
        return torch.linalg.vector_norm(diff, dim=-1)
    re, im = diff.chunk(2, dim=-1)
    return (re.square() + im.square()).sqrt().sum(-1)


def _tables(device, seed=0):
    gen = torch.Generator().manual_seed(seed)
    queries = torch.randn(6, 8, generator=gen, dtype=torch.float64).to(device)
    entities = torch.randn(5, 8, generator=gen, dtype=torch.float64).to(device)
    qi = torch.randint(6, (4, 7), generator=gen).to(device)
    ei = torch.randint(5, (4, 7), generator=gen).to(device)
    return queries, qi, entities, ei


@pytest.mark.parametrize("kind", DISTANCES)
@pytest.mark.parametrize("reuse", [False, True])
def test_values_and_gradients_match_autograd(kind, reuse, device):
    queries, qi, entities, ei = _tables(device)
    workspace = Workspace() if reuse else None
    weight = torch.rand(qi.shape, dtype=torch.float64, device=device)  # a non-uniform upstream
    grads = []
    for fn in (_reference, None):
        q = queries.clone().requires_grad_()
        e = entities.clone().requires_grad_()
        if fn is None:
            out = gathered_distance(q, qi, e, ei, kind=kind, workspace=workspace)
        else:
            out = fn(q, qi, e, ei, kind)
        (out * weight).sum().backward()
        grads.append((out.detach(), q.grad, e.grad))
    for ref, ours in zip(*grads):
        torch.testing.assert_close(ours, ref)
    if reuse:
        assert not workspace.lent  # handed back by backward


@pytest.mark.parametrize("kind", DISTANCES)
@pytest.mark.parametrize("reuse", [False, True])
@pytest.mark.parametrize("into_buffer", [False, True])
def test_one_query_per_row_is_broadcast_with_the_same_values_and_gradients(
    kind, reuse, into_buffer
):
    queries, qi, entities, ei = _tables("cpu", seed=4)
    rows = qi[:, 0]  # [4]: one query per row of k = 7 outputs
    weight = torch.rand(ei.shape, dtype=torch.float64)
    q = queries.clone().requires_grad_()
    e = entities.clone().requires_grad_()
    (_reference(q, rows[:, None].expand_as(ei), e, ei, kind) * weight).sum().backward()
    q2 = queries.clone().requires_grad_()
    e2 = entities.clone().requires_grad_()
    buffer = torch.zeros_like(entities) if into_buffer else None
    workspace = Workspace() if reuse else None
    out = gathered_distance(q2, rows, e2, ei, kind=kind, workspace=workspace, entity_grad=buffer)
    assert out.shape == ei.shape
    (out * weight).sum().backward()
    torch.testing.assert_close(out.detach(), _reference(queries, rows[:, None], entities, ei, kind))
    torch.testing.assert_close(q2.grad, q.grad)
    torch.testing.assert_close(buffer if into_buffer else e2.grad, e.grad)


def test_query_index_of_another_shape_is_refused():
    queries, qi, entities, ei = _tables("cpu")
    with pytest.raises(GraphDataError, match="query_index"):
        gathered_distance(queries, qi[:, :3], entities, ei, kind="l1")


@pytest.mark.parametrize("kind", DISTANCES)
def test_gradient_at_zero_distance_is_zero(kind):
    # A query equal to its entity: the norm's gradient is taken as 0 (finite), like autograd's
    # L1/L2 norms; the plain autograd complex modulus would give NaN here.
    queries = torch.tensor([[1.0, 2.0, 3.0, 4.0]], requires_grad=True)
    entities = torch.tensor([[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 0.0]], requires_grad=True)
    index = torch.tensor([0])
    out = gathered_distance(queries, index, entities, index, kind=kind)
    out.sum().backward()
    assert out.item() == 0.0
    assert torch.equal(queries.grad, torch.zeros_like(queries))
    assert torch.equal(entities.grad, torch.zeros_like(entities))


def test_workspace_is_reused_and_never_shared_between_live_graphs():
    queries, qi, entities, ei = _tables("cpu", seed=3)
    q = queries.requires_grad_()
    workspace = Workspace()
    first = gathered_distance(q, qi, entities, ei, kind="complex_l1", workspace=workspace)
    assert workspace.lent
    # A second graph while the first is alive allocates its own buffers: both stay correct.
    second = gathered_distance(q, qi.flip(0), entities, ei, kind="complex_l1", workspace=workspace)
    expected = _reference(queries.detach(), qi, entities, ei, "complex_l1")
    torch.testing.assert_close(first.detach(), expected)
    first.sum().backward()
    grad_first = q.grad.clone()
    q.grad = None
    second.sum().backward()
    ref_q = queries.detach().clone().requires_grad_()
    _reference(ref_q, qi, entities, ei, "complex_l1").sum().backward()
    torch.testing.assert_close(grad_first, ref_q.grad)
    assert not workspace.lent
    # Without a gradient the buffers come back at once.
    with torch.no_grad():
        gathered_distance(queries, qi, entities, ei, kind="l1", workspace=workspace)
    assert not workspace.lent


def test_backward_twice_is_refused():
    queries, qi, entities, ei = _tables("cpu")
    q = queries.requires_grad_()
    out = gathered_distance(q, qi, entities, ei, kind="l2").sum()
    out.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="runs once"):
        out.backward()
