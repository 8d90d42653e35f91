"""A channel: one conversation with one CLI process, and the parts that each do one job.

``channel`` has the verbs a front end calls; ``routing`` reads each CLI line once and
hands it to the part it concerns: ``settings`` (session, model, mode, tasks), ``turns``
(the state machine, ``claude/turnEnded``), ``meter`` (the context meter),
``permissions`` (pending asks), ``files`` (edit previews, the edit hooks and log),
``editor_tools`` (the in-process MCP server ``editor``), ``channel_info`` (what the CLI
reports). ``mcp_servers`` and ``rewind`` are verbs over a channel.

May use ``feed``, ``conversation``, ``cli``, ``runtime`` and ``protocol``; knows no front
end and no stored session.
"""
