"""The tests' data converter: Greenloop's own (``server/client.py``), plus a codec that
refuses any payload over ``MOST_TEST_PAYLOAD_BYTES``.

Temporal refuses a payload over 2 MiB and a run that produces one wedges; the run's
payloads are bounded by design (compact changes, references to files in the run
directory). Every test on the real dev server goes through this codec (the client and
the workers built on it encode with it), so a payload that grows past the bound fails
the test that produced it, loudly and named, instead of passing far below a limit that
a larger run would reach: ``drive`` stops the run at once, and every test fails at its
end when anything it ran produced one (``tests/conftest.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from temporalio.api.common.v1 import Payload
from temporalio.converter import DataConverter, PayloadCodec

from greenloop.server.client import DATA_CONVERTER

# Far under Temporal's 2 MiB (and the run's own guard, 1 MiB: workflows/payloads.py): the tests' runs are
# small, and a payload that grows with the size of files or the number of tests shows here first.
MOST_TEST_PAYLOAD_BYTES = 256 * 1024


class PayloadOverBound(Exception):
    """A payload over the tests' bound was about to reach Temporal."""


class PayloadBound(PayloadCodec):
    """Passes payloads through unchanged; raises on one over ``most`` bytes and records it."""

    def __init__(self, most: int = MOST_TEST_PAYLOAD_BYTES) -> None:
        self.most = most
        self.over: list[str] = []  # every payload refused, described

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        for p in payloads:
            size = p.ByteSize()
            if size > self.most:
                what = (f"a payload of {size / 1024:.1f} KiB, over the tests' bound of {self.most / 1024:.0f} KiB: "
                        f"{p.data[:200].decode(errors='replace')}...")
                self.over.append(what)
                raise PayloadOverBound(what)
        return list(payloads)

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return list(payloads)

    @contextmanager
    def expecting_over(self) -> Iterator[list[str]]:
        """For a test that makes one on purpose: the payloads refused inside, forgotten after."""
        before = len(self.over)
        refused: list[str] = []
        try:
            yield refused
        finally:
            refused.extend(self.over[before:])
            del self.over[before:]


BOUND = PayloadBound()
TEST_CONVERTER: DataConverter = dataclasses.replace(DATA_CONVERTER, payload_codec=BOUND)
