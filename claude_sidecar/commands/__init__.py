"""The ``claude-sidecar`` command line (``main``) and the demo (``demo``): the top, which
may use every layer and the scripted stand-in model; nothing imports it."""
