"""The shared per-user daemon (``claude-sidecar serve``, ``connect``, ``status``, ``stop``).

One hub for every connection, each connection served by the ``claude/*`` server
(``frontends.server``): where its socket lives and the checks that keep it private
(``place``), the listener, peer check and lifetime (``serve``), one client's connection
and bounded send queue (``connection``), the chats and their attached clients
(``shared``), each chat's notifications fanned out and kept in a replay window
(``streams``), the stdio bridge (``bridge``), ``status`` and ``stop`` for a person at a
shell (``admin``), and a daemon of another version (``upgrade``).
"""
