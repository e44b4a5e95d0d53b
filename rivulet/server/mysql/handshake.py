"""Checks of what a client sends before mysql-mimic parses it.

mimic's packet parsers (compiled with mypyc) trust lengths and terminators: a NUL-terminated
string without its NUL makes ``read_str_null`` loop forever, and a connection-attributes
block whose declared length runs past the packet loops for up to 2**64 turns, on the event
loop that serves every connection. One malformed handshake response froze the server for
everyone (found by tests/test_fuzz_protocol.py). Every such packet is checked here first
and refused with MySQL's malformed-packet error (1835), which ends that one connection.
"""

from __future__ import annotations

import asyncio
import ssl
from asyncio import sslproto
from typing import Any

from mysql_mimic.errors import MysqlError
from mysql_mimic.types import Capabilities

from rivulet.server.errors import ER_MALFORMED_PACKET

_SSL_REQUEST_SIZE = 32  # capabilities, max packet, charset, 23 filler bytes


class Malformed(MysqlError):
    def __init__(self, what: str) -> None:
        super().__init__(f"malformed packet: {what}", ER_MALFORMED_PACKET)


class _Reader:
    """Bounds-checked reads of one packet's payload."""

    def __init__(self, data: bytes, pos: int) -> None:
        self.data, self.pos = data, pos

    def fixed(self, n: int, what: str) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise Malformed(f"{what} runs past the end of the packet")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def uint(self, n: int, what: str) -> int:
        return int.from_bytes(self.fixed(n, what), "little")

    def lenenc(self, what: str) -> int:
        first = self.uint(1, what)
        size = {0xFC: 2, 0xFD: 3, 0xFE: 8}.get(first)
        if first == 0xFF:
            raise Malformed(f"{what} has an invalid length prefix")
        return first if size is None else self.uint(size, what)

    def null_terminated(self, what: str) -> bytes:
        end = self.data.find(b"\x00", self.pos)
        if end < 0:
            raise Malformed(f"{what} has no terminating NUL")
        out = self.data[self.pos:end]
        self.pos = end + 1
        return out


def check_handshake_response(data: bytes, server_capabilities: Capabilities) -> None:
    """Raise :class:`Malformed` unless mimic's ``parse_handshake_response`` can read
    ``data`` to its end without running past it."""
    reader = _Reader(data, 0)
    client = Capabilities(reader.uint(4, "the capability flags"))
    caps = server_capabilities & client
    reader.fixed(_SSL_REQUEST_SIZE - 4, "the handshake response header")
    if reader.pos == len(data):
        return  # an SSL request
    reader.null_terminated("the user name")
    if Capabilities.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA in caps:
        reader.fixed(reader.lenenc("the auth response"), "the auth response")
    else:
        reader.fixed(reader.uint(1, "the auth response length"), "the auth response")
    if Capabilities.CLIENT_CONNECT_WITH_DB in caps:
        reader.null_terminated("the database name")
    if Capabilities.CLIENT_PLUGIN_AUTH in caps:
        reader.null_terminated("the auth plugin name")
    if Capabilities.CLIENT_CONNECT_ATTRS in caps:
        total = reader.lenenc("the connection attributes")
        end = reader.pos + total
        if end > len(data):
            raise Malformed("the connection attributes run past the end of the packet")
        while reader.pos < end:
            reader.fixed(reader.lenenc("an attribute name"), "an attribute name")
            reader.fixed(reader.lenenc("an attribute value"), "an attribute value")
        if reader.pos != end:
            raise Malformed("the connection attributes overrun their declared length")


def check_field_list(payload: bytes) -> None:
    """COM_FIELD_LIST's table name must end with a NUL (``payload`` without the command)."""
    if b"\x00" not in payload:
        raise Malformed("COM_FIELD_LIST's table name has no terminating NUL")


class GuardedStream:
    """mimic's stream for the connection phase, with each handshake response checked
    before mimic parses it: the first read, and the second after an SSL request. Every
    other attribute is the stream's (looked up on each use: mimic rebinds some); the
    command loop takes ``.inner`` back, so the hot path pays nothing for the guard."""

    def __init__(self, inner: Any, server_capabilities: Capabilities) -> None:
        self.inner = inner
        self._capabilities = server_capabilities
        self._to_check = 1

    async def read(self) -> bytes:
        data = await self.inner.read()
        if self._to_check:
            self._to_check -= 1
            check_handshake_response(data, self._capabilities)
            if len(data) == _SSL_REQUEST_SIZE:
                self._to_check = 1  # the real response follows, over TLS
        return data

    async def start_tls(self, context: ssl.SSLContext) -> None:
        """mimic's ``start_tls``, but with the bytes the stream has already read handed to
        TLS: a client sends its TLS hello right after its SSL request, without waiting, so
        both often arrive in one read, and mimic's upgrade lost the hello (the handshake
        then stalled until the client gave up; about one connection in three)."""
        reader, writer = self.inner.reader, self.inner.writer
        transport = writer.transport
        loop = asyncio.get_running_loop()
        early = bytes(reader._buffer)
        reader._buffer.clear()
        waiter = loop.create_future()
        tls = sslproto.SSLProtocol(loop, transport.get_protocol(), context, waiter,
                                   server_side=True, call_connection_made=False)
        transport.pause_reading()
        transport.set_protocol(tls)
        tls.connection_made(transport)
        while early:  # as the transport would have delivered them
            buffer = tls.get_buffer(len(early))
            n = min(len(buffer), len(early))
            buffer[:n] = early[:n]
            early = early[n:]
            tls.buffer_updated(n)
        transport.resume_reading()
        try:
            await waiter
        except BaseException:
            transport.close()
            raise
        writer._transport = reader._transport = tls._app_transport

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
