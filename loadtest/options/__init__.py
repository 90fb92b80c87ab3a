"""Every option of the tool in one wing: the ``Option`` type and its registration (``option``), the value parsers
(``values``: numbers, switches, mixes; ``rules``: the options with rules of their own), the declarations (``stress``:
the stress test's, their values bounded by ``loadtest.limits``; ``commands``: each command's own, and which command
takes what; ``emulator``, ``traffic``, ``advise``: those commands' own; ``command_help``: each command's help;
``form``: the web UI's start form), and ``settings``: a stress test's options validated as one, the rules that span
options included, whichever way a run starts.
"""
