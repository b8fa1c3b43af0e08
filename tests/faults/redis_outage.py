"""A Redis client that fails like an outage: the fault tests' stand-in for a cut connection."""

from __future__ import annotations

import redis


class FlakyRedis:
    """Wraps a Redis client; every call raises ``redis.ConnectionError`` while ``down`` is set
    (a Lua script registered through it too: its calls go through the wrapper)."""

    def __init__(self, client):
        self.client, self.down = client, False

    def register_script(self, script):
        from redis.commands.core import Script

        return Script(self, script)

    def __getattr__(self, name):
        if self.down:

            def fail(*a, **k):
                raise redis.ConnectionError("down")

            return fail
        return getattr(self.client, name)
