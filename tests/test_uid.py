"""new_uid: RFC 4122 version 4 text, as uuid.uuid4() would print it."""

from __future__ import annotations

import re
import uuid

from platform_api.uid import new_uid

_TEXT = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def test_uids_are_version_4_and_distinct() -> None:
    seen = {new_uid() for _ in range(10_000)}
    assert len(seen) == 10_000
    for text in list(seen)[:500]:
        assert _TEXT.match(text), text
        parsed = uuid.UUID(text)
        assert (parsed.version, parsed.variant, str(parsed)) == (4, uuid.RFC_4122, text)
