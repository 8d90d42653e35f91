"""claude-sidecar: embed the Claude Code agent in any editor."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("claude-sidecar")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0+unknown"
