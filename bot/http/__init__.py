"""The HTTP front end: Discord POSTs each interaction to ``/interactions`` (the application's
Interactions Endpoint URL) and any replica answers it, in the HTTP response itself.

``signature`` checks Discord's Ed25519 signature, ``payload`` reads a raw interaction, ``replies``
writes the JSON discord.py would send for the same answer, ``answer`` answers an interaction as the
gateway cog does (through :mod:`bot.present.interactions`, the reading both front ends share),
``webhook`` edits the original response and sends follow-ups, and ``server`` is the aiohttp server
with its health endpoint and graceful stop. No discord.py client runs here.
"""
