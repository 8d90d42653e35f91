"""ACP prompt content and session parameters in the shapes the CLI takes.

Pure: no I/O. A prompt's blocks become one user message's content (Anthropic blocks):
text as text, an image as an image, a resource link as an ``@``-mention of the file
(``[@name](uri)``, how Claude Code's own clients refer to files), an embedded text
resource as that mention plus its text in a ``<context ref="uri">`` block after the
prompt. The client's MCP servers become the CLI's ``mcpServers`` object.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    HttpMcpServer,
    ImageContentBlock,
    McpServerStdio,
    ResourceContentBlock,
    SseMcpServer,
    TextContentBlock,
)

from claude_sidecar.frontends.acp.errors import invalid

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def mention(uri: str, name: str | None = None) -> str:
    """A file's ``@``-mention: ``[@name](uri)`` for ``file://`` URIs, else the URI."""
    parts = urlsplit(uri)
    if parts.scheme != "file":
        return uri
    label = name or unquote(parts.path.rstrip("/").rsplit("/", 1)[-1]) or uri
    return f"[@{label}]({uri})"


def cli_content(blocks: list[PromptBlock]) -> list[dict[str, Any]]:
    """One user message's content for the CLI, or ``invalid`` naming the block."""
    if not blocks:
        raise invalid("prompt", "is empty", "send at least one content block")
    content: list[dict[str, Any]] = []
    context: list[dict[str, Any]] = []
    for i, block in enumerate(blocks):
        field = f"prompt.{i}"
        if isinstance(block, TextContentBlock):
            content.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageContentBlock):
            content.append(_image(field, block))
        elif isinstance(block, ResourceContentBlock):
            content.append({"type": "text", "text": mention(block.uri, block.name)})
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, BlobResourceContents):
                if resource.mime_type not in IMAGE_TYPES:
                    raise invalid(
                        f"{field}.resource.blob",
                        f"is a binary resource of type {resource.mime_type!r}",
                        "embed text resources, or send images as image blocks "
                        f"({', '.join(sorted(IMAGE_TYPES))})",
                    )
                content.append(_base64_image(resource.mime_type, resource.blob))
                continue
            content.append({"type": "text", "text": mention(resource.uri)})
            context.append(
                {
                    "type": "text",
                    "text": f'\n<context ref="{resource.uri}">\n{resource.text}\n</context>',
                }
            )
        else:
            raise invalid(
                f"{field}.type",
                f"is {block.type!r}, which this agent does not take "
                "(promptCapabilities.audio is false)",
                "send text, image, resource_link or resource blocks",
            )
    return content + context


def _image(field: str, block: ImageContentBlock) -> dict[str, Any]:
    if block.data:
        if block.mime_type not in IMAGE_TYPES:
            raise invalid(
                f"{field}.mimeType",
                f"is {block.mime_type!r}",
                f"use one of {', '.join(sorted(IMAGE_TYPES))}",
            )
        return _base64_image(block.mime_type, block.data)
    if block.uri and urlsplit(block.uri).scheme in ("http", "https"):
        return {"type": "image", "source": {"type": "url", "url": block.uri}}
    raise invalid(
        f"{field}.data",
        "is empty and `uri` is no http(s) URL",
        "send the image as base64 `data` (or an http(s) `uri`)",
    )


def _base64_image(mime_type: str, data: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": mime_type, "data": data}}


McpServer = HttpMcpServer | SseMcpServer | McpServerStdio


def mcp_servers(servers: list[Any] | None) -> dict[str, dict[str, Any]] | None:
    """The client's MCP servers as the CLI's ``mcpServers`` (None: none given)."""
    if not servers:
        return None
    config: dict[str, dict[str, Any]] = {}
    for i, server in enumerate(servers):
        if server.name in config:
            raise invalid(
                f"mcpServers.{i}.name",
                f"is {server.name!r}, the name of an earlier server",
                "give every server its own name",
            )
        if isinstance(server, McpServerStdio):
            config[server.name] = {
                "type": "stdio",
                "command": server.command,
                "args": list(server.args),
                "env": {v.name: v.value for v in server.env},
            }
        elif isinstance(server, HttpMcpServer | SseMcpServer):
            config[server.name] = {
                "type": server.type,
                "url": server.url,
                "headers": {h.name: h.value for h in server.headers},
            }
        else:
            raise invalid(
                f"mcpServers.{i}.type",
                f"is {getattr(server, 'type', None)!r} (mcpCapabilities.acp is false)",
                "pass stdio, http or sse servers",
            )
    return config
