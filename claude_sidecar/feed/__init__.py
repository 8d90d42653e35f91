"""What a channel tells whoever listens: its typed events and the ``Feed`` and
``Subscriber`` interfaces that receive them (``events``), and the file changes those
events carry, with their diffs (``changes``).

The contract between the channel, which publishes, and the conversation and front ends,
which listen: below all three. May use ``protocol``, ``runtime`` and ``cli``.
"""
