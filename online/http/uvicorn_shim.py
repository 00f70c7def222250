"""The one place draftpool subclasses uvicorn's private HTTP protocol (`uvicorn.protocols.http.h11_impl.H11Protocol`)
and reads h11's connection state: `head_deadline_protocol` adds a deadline on request heads and refuses folded header
lines (online/http/asgi.py describes the HTTP edge they belong to).

What it relies on: H11Protocol's `connection_made`, `handle_events`, `on_response_complete`, `connection_lost`,
`send_400_response`, its `loop`, `transport`, `conn` (an h11.Connection) and `cycle.response_complete`; h11's
`Connection.their_state`, `trailing_data` and `IDLE`. Checked on uvicorn 0.54.0 with h11 0.16.0
(`pip show uvicorn h11`); pyproject.toml bounds uvicorn below the next minor (<0.55). `check` refuses any other minor
version with one error (draftpool/version_guard.py) before the protocol class is built.
"""

from __future__ import annotations

import re
from importlib.metadata import version

from draftpool.version_guard import check_version

UVICORN = ((0, 30), (0, 55))  # checked: >= 0.30 (pyproject's floor), < 0.55 (pyproject's upper bound)
H11 = ((0, 14), (0, 17))
CHECKED = "uvicorn 0.54.0, h11 0.16.0"


def check(uvicorn_version: str | None = None, h11_version: str | None = None) -> None:
    """Raise UncheckedVersionError when the installed (or given) uvicorn or h11 is outside the checked range."""
    check_version("uvicorn", uvicorn_version or version("uvicorn"), *UVICORN, "online/http/uvicorn_shim.py", CHECKED)
    check_version("h11", h11_version or version("h11"), *H11, "online/http/uvicorn_shim.py", CHECKED)


_HEAD_END = re.compile(rb"\n\r?\n")  # h11's end of a request head
_FOLD = re.compile(rb"\n[ \t]")  # a head line that starts with a space or tab


def folded_head(buffered: bytes) -> bool:
    """Whether the request head at the start of `buffered` (whole or its part received so far) has an obs-fold line:
    one that starts with a space or tab, which h11 joins to the header line before it (RFC 9112 section 5.2 lets a
    server refuse it instead; a proxy in front may read it as a header of its own)."""
    end = _HEAD_END.search(buffered)
    return _FOLD.search(buffered if end is None else buffered[:end.start() + 1]) is not None


def head_deadline_protocol(head_timeout: float) -> type:
    """uvicorn's h11 protocol plus a deadline on the request head: a connection that has not sent a whole request line
    and headers within `head_timeout` s of opening, or of its previous answer, is closed (uvicorn alone keeps an idle
    connection, or one whose headers trickle in, open for ever). And a request head with an obs-fold line gets a 400
    and the connection is closed (`folded_head`)."""
    check()
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeadDeadline(H11Protocol):
        _timer = None

        def _arm(self) -> None:
            self._disarm()
            self._timer = self.loop.call_later(head_timeout, self._expired)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _expired(self) -> None:
            if (self.cycle is None or self.cycle.response_complete) and not self.transport.is_closing():
                self.transport.close()

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm()

        def handle_events(self) -> None:
            # rule: h11 parses a head only while the client's side is IDLE (a new connection, or after
            # start_next_cycle, which uvicorn follows with handle_events): what it holds then starts with the head.
            # uvicorn also starts the next cycle inside its own loop when an answer went out before its request's body
            # ended; behind Edge such an answer closes the connection, so no head is parsed that way
            if self.conn.their_state is h11.IDLE and folded_head(self.conn.trailing_data[0]):
                self.send_400_response("Invalid HTTP request received: a folded header line (obs-fold).")
                return
            super().handle_events()
            if self.cycle is not None and not self.cycle.response_complete:  # a whole head arrived
                self._disarm()

        def on_response_complete(self) -> None:
            self._arm()  # before: a pipelined request that follows disarms it again
            super().on_response_complete()

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

    return HeadDeadline
