"""Early pytest plugin (loaded with `-p` in addopts, before any conftest or test module).

anthropic 2.x sends through `httpx2`; respx patches `httpx`. Aliasing makes them one library, as
the SDK's migration guide prescribes, so respx intercepts every SDK request. As a second net,
sockets may only connect to loopback or Unix sockets: a request no respx route answers can never
reach the real network from a test.
"""

import socket

import httpx2

httpx2.alias_httpx()

_real_connect = socket.socket.connect


def _loopback_only(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        host = address[0]
        if host not in ("127.0.0.1", "::1", "localhost") and not str(host).startswith("127."):
            raise OSError(f"tests may not use the network (tried {address!r}); mock it with respx")
    return _real_connect(self, address)


socket.socket.connect = _loopback_only
