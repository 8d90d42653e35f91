"""The current conversation of a session file: which entries, in which order.

The file is a tree, not a list: ``--resume-session-at`` branches off an earlier message,
parallel tool calls fan out (each tool result's parent is its own call), and after a
``/compact`` the chain starts again at a ``compact_boundary`` whose ``parentUuid`` is null.
:func:`conversation` does what the CLI does on resume:

1. The leaf is the **last** ``user``/``assistant`` entry in the file that is not a
   sidechain (or a ``system`` entry written after it as its child, such as the output of a
   final slash command); the chain is the walk from it along ``parentUuid`` to the root.
2. A compact boundary carrying a preserved segment (``compactMetadata.preservedSegment``
   or ``preservedMessages``) is relinked as the CLI does: the preserved messages follow
   the compact summary, and what was chained on the summary follows them.
   ``logicalParentUuid`` (the pre-compaction history) is not followed: like the CLI,
   the history of a compacted session starts at its last compaction.
3. A ``parentUuid`` that is not in the file (a lost or corrupt line) is bridged to the
   closest earlier entry in the file, with a warning.
4. Tool calls and results of a parallel turn that the walk passed by (siblings sharing
   the response's ``message.id``, results whose parent is one of them) are put back
   right after the response.
"""

from __future__ import annotations

from typing import Any

from claude_sidecar.sessions.entries import CHAIN_TYPES, File, Line, content_blocks, message_id


def _relink_preserved(
    nodes: dict[str, Line], parent: dict[str, str | None], lines: list[Line]
) -> None:
    """Apply the last compact boundary's preserved segment, as the CLI does on load."""
    boundary = next(
        (
            ln
            for ln in reversed(lines)
            if ln.entry.type == "system" and ln.entry.subtype == "compact_boundary"
        ),
        None,
    )
    meta = boundary.entry.compact_metadata if boundary else None
    if not isinstance(meta, dict):
        return
    uuids: list[str] = []
    anchor: Any = None
    kept = meta.get("preservedMessages")
    segment = meta.get("preservedSegment")
    if isinstance(kept, dict) and isinstance(kept.get("uuids"), list):
        anchor = kept.get("anchorUuid")
        uuids = [u for u in kept["uuids"] if isinstance(u, str)]
    elif isinstance(segment, dict):
        anchor, head, current = (
            segment.get("anchorUuid"),
            segment.get("headUuid"),
            segment.get("tailUuid"),
        )
        seen: set[str] = set()
        while isinstance(current, str) and current in nodes and current not in seen:
            seen.add(current)
            uuids.append(current)
            if current == head:
                break
            current = parent.get(current)
        if not uuids or uuids[-1] != head:
            return
        uuids.reverse()
    if not uuids or not isinstance(anchor, str) or any(u not in nodes for u in uuids):
        return
    for uuid, previous in zip(uuids, [anchor, *uuids[:-1]], strict=True):
        parent[uuid] = previous
    for uuid, p in list(parent.items()):
        if p == anchor and uuid != uuids[0]:
            parent[uuid] = uuids[-1]


def conversation(file: File, warnings: list[str], sidechain: bool = False) -> list[Line]:
    """The current conversation, root first (see the module docstring); problems with
    the links go to ``warnings``. ``sidechain``: the file is a sub-agent's transcript,
    where every entry is a sidechain entry."""
    nodes: dict[str, Line] = {}
    parent: dict[str, str | None] = {}
    for line in file.lines:
        e = line.entry
        if e.uuid:  # unknown types with a uuid are kept so that the chain goes through them
            nodes[e.uuid] = line
            parent[e.uuid] = e.parent_uuid
    leaf = next(
        (
            ln
            for ln in reversed(file.lines)
            if ln.entry.type in ("user", "assistant") and (sidechain or not ln.entry.is_sidechain)
        ),
        None,
    )
    if leaf is None:
        return []
    for line in file.lines[leaf.index + 1 :]:  # e.g. the output of a final slash command
        if line.entry.type == "system" and line.entry.parent_uuid == leaf.entry.uuid:
            leaf = line
    _relink_preserved(nodes, parent, file.lines)

    chain: list[Line] = []
    seen: set[str] = set()
    current: Line | None = leaf
    while current is not None:
        uuid = current.entry.uuid
        assert uuid is not None
        seen.add(uuid)
        chain.append(current)
        p = parent.get(uuid)
        if not p:
            break
        nxt = nodes.get(p)
        if nxt is not None and p in seen:
            warnings.append(
                f"line {current.number}: the chain loops back to {p}; "
                f"the history before it is left out"
            )
            break
        if nxt is None:
            nxt = next(
                (
                    ln
                    for ln in reversed(file.lines[: current.index])
                    if ln.entry.uuid
                    and ln.entry.uuid not in seen
                    and ln.entry.type in CHAIN_TYPES
                    and (sidechain or not ln.entry.is_sidechain)
                ),
                None,
            )
            joined = (
                f"joined to the entry on line {nxt.number}"
                if nxt is not None
                else "the history before it is missing"
            )
            warnings.append(f"line {current.number}: parent {p} is not in the file; {joined}")
        current = nxt
    chain.reverse()
    return _recover_parallel(file, chain, seen, sidechain)


def _recover_parallel(file: File, chain: list[Line], seen: set[str], sidechain: bool) -> list[Line]:
    """Put back the calls and results of parallel tool use that the walk passed by."""
    siblings: dict[str, list[Line]] = {}
    results: dict[str, list[Line]] = {}
    for line in file.lines:
        e = line.entry
        if e.is_sidechain and not sidechain:
            continue
        if (mid := message_id(e)) is not None:
            siblings.setdefault(mid, []).append(line)
        elif e.type == "user" and any(b.type == "tool_result" for b in content_blocks(e)):
            for key in {e.parent_uuid, e.source_tool_assistant_uuid}:
                if isinstance(key, str):
                    results.setdefault(key, []).append(line)
    inserts: dict[str, list[Line]] = {}
    done: set[str] = set()
    anchors = {mid: line for line in chain if (mid := message_id(line.entry)) is not None}
    for mid, anchor in anchors.items():
        if mid in done:
            continue
        done.add(mid)
        group = siblings.get(mid, [])
        found = [ln for ln in group if ln.entry.uuid not in seen]
        taken = {ln.entry.uuid for ln in found}
        for member in group:
            for result in results.get(member.entry.uuid or "", ()):
                if result.entry.uuid not in seen and result.entry.uuid not in taken:
                    taken.add(result.entry.uuid)
                    found.append(result)
        if not found:
            continue
        found.sort(
            key=lambda ln: (ln.entry.type != "assistant", str(ln.entry.timestamp or ""), ln.index)
        )
        seen.update(ln.entry.uuid for ln in found if ln.entry.uuid)
        inserts[anchor.entry.uuid or ""] = found
    if not inserts:
        return chain
    out: list[Line] = []
    for line in chain:
        out.append(line)
        out.extend(inserts.get(line.entry.uuid or "", ()))
    return out
