"""``uv run python -m release check | protocol [--against TAG] | set-version X.Y.Z | tag |
last | build [--out DIR]``."""

from __future__ import annotations

import argparse
import datetime
import subprocess
import sys
from pathlib import Path

from release import build, changelog, history, schema_diff, versions

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None, root: Path = ROOT) -> int:
    """Run one subcommand on the repository at ``root``; 0 on success, 1 when refused."""
    parser = argparse.ArgumentParser(prog="python -m release", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="check that the version agrees everywhere")
    protocol = sub.add_parser(
        "protocol",
        help="check that the protocol breaks no client of the last release (or TAG) unless "
        "its version rose",
    )
    protocol.add_argument("--against", metavar="TAG", default=None)
    setter = sub.add_parser(
        "set-version",
        help="write X.Y.Z everywhere and move CHANGELOG's Unreleased to a dated X.Y.Z section",
    )
    setter.add_argument("version")
    sub.add_parser(
        "tag",
        help="tag HEAD as the release of its version and commit it in release/releases.tsv",
    )
    sub.add_parser("last", help="print the last release's tag and commit")
    builder = sub.add_parser("build", help="build every artifact and SHA256SUMS")
    builder.add_argument("--out", type=Path, default=root / "dist")
    builder.add_argument(
        "--allow-uncommitted",
        action="store_true",
        help="build even with uncommitted changes (to try it; a release is built from its tag)",
    )
    args = parser.parse_args(argv)

    try:
        if args.command == "check":
            problems = versions.disagreements(root)
            if problems:
                raise ValueError("\n".join(problems))
            print(f"release: version {versions.source_version(root)} agrees everywhere")
        elif args.command == "protocol":
            problems = schema_diff.refusals(root, args.against)
            if problems:
                raise ValueError("\n".join(problems))
            last = history.last_release(root)
            against = args.against or (last.tag if last else None)
            print(
                f"release: the protocol breaks no client of {against}"
                if against
                else "release: no release yet: nothing to compare the protocol with"
            )
        elif args.command == "tag":
            problems = build.uncommitted(root) + build.refusals(root)
            if problems:
                raise ValueError("\n".join(problems))
            tagged = history.tag_head(root, versions.source_version(root))
            print(
                f"release: tagged {tagged.commit} as {tagged.tag} and recorded it in "
                f"{history.RECORD}; push both: git push origin main {tagged.tag}"
            )
        elif args.command == "last":
            last = history.last_release(root)
            if last is None:
                raise ValueError("no release yet: no vX.Y.Z tag, nothing in release/releases.tsv")
            print(f"{last.tag} {last.commit}")
        elif args.command == "set-version":
            set_version(root, args.version, datetime.datetime.now(datetime.UTC).date())
            print(f"release: version {args.version} written everywhere; CHANGELOG.md dated")
        else:
            artifacts = build.build(root, args.out, allow_uncommitted=args.allow_uncommitted)
            print("release: built\n" + "".join(f"  {path}\n" for path in artifacts), end="")
    except ValueError as refused:
        print(f"release: refused:\n{refused}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as failed:
        print(
            f"release: failed: {' '.join(failed.cmd)} exited {failed.returncode}", file=sys.stderr
        )
        return 1
    return 0


def set_version(root: Path, version: str, date: datetime.date) -> None:
    """Write ``version`` into every place and release CHANGELOG.md's Unreleased as it, dated
    ``date``. Changes nothing when refused (ValueError)."""
    path = root / changelog.PATH
    released = changelog.release(path.read_text(encoding="utf-8"), version, date.isoformat())
    versions.write_version(root, version)
    path.write_text(released, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
