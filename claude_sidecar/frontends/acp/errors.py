"""ACP errors: ``Invalid params`` naming the field and the fix, and the daemon's errors
turned into ACP's."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from acp import RequestError

from claude_sidecar.protocol.errors import InvalidParams, SidecarError

P = ParamSpec("P")
R = TypeVar("R")


def invalid(field: str, problem: str, fix: str) -> RequestError:
    """An ACP ``Invalid params`` error naming the field and the fix: the SDK's shape
    (``data.errors`` as pydantic reports them) with ``field`` and ``fix`` beside it."""
    return RequestError(
        -32602,
        f"Invalid params: `{field}` {problem}; {fix}",
        {
            "field": field,
            "fix": fix,
            "errors": [{"loc": field.split("."), "msg": problem, "type": "value_error"}],
        },
    )


def as_acp_errors(method: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """The daemon's errors as ACP errors (``Invalid params`` naming the field and fix)."""

    @functools.wraps(method)
    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await method(*args, **kwargs)
        except InvalidParams as e:
            field = str(e.data.get("field", "params"))
            said = e.message.split(f"`{field}` ", 1)[-1]
            problem, _, fix = said.rpartition("; ")
            raise invalid(field, problem or said, fix or "see docs/acp.md") from e
        except SidecarError as e:
            raise RequestError(e.code, e.message, e.data) from e

    return call
