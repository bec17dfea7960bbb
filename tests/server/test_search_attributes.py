"""Greenloop's search attributes on a namespace that lacks them: registered before a run
starts or a worker polls, or a typed error saying how (a run would otherwise fail its
first workflow task forever with BadSearchAttributes, and look like a run nobody serves)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from google.protobuf.duration_pb2 import Duration
from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest
from temporalio.api.workflowservice.v1 import RegisterNamespaceRequest
from temporalio.service import RPCError

from greenloop.domain.errors import GreenloopError
from greenloop.server import search_attributes as search
from greenloop.server.client import connect, ensure_search_attributes


async def _attributes(client) -> set[str]:
    listed = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=client.namespace))
    return set(listed.custom_attributes)


async def test_a_fresh_namespace_gets_greenloops_search_attributes(temporal_env):
    address = temporal_env.client.service_client.config.target_host
    namespace = f"fresh-{uuid.uuid4().hex[:8]}"
    await temporal_env.client.workflow_service.register_namespace(RegisterNamespaceRequest(
        namespace=namespace, workflow_execution_retention_period=Duration(seconds=86400)))
    client = await connect(address, namespace)
    for _ in range(50):  # the server's namespace cache takes a moment to know it
        try:
            before = await _attributes(client)
            break
        except RPCError:
            await asyncio.sleep(0.2)
    else:
        pytest.fail(f"namespace {namespace} never became usable")
    assert not {key.name for key in search.ALL} <= before
    await ensure_search_attributes(client)
    assert {key.name for key in search.ALL} <= await _attributes(client)
    await ensure_search_attributes(client)  # registered ones are fine


async def test_a_namespace_that_cannot_get_them_is_a_typed_error(temporal_env):
    address = temporal_env.client.service_client.config.target_host
    client = await connect(address, f"missing-{uuid.uuid4().hex[:8]}")
    with pytest.raises(GreenloopError) as err:
        await ensure_search_attributes(client)
    assert "lacks Greenloop's search attributes" in err.value.message
    assert "deploy/README.md" in (err.value.context.get("suggestion") or "")
