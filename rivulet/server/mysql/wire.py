"""Packet framing of a MySQL connection after authentication, as an asyncio Protocol.

mysql-mimic reads packets with ``StreamReader.readexactly``: a future, a task wake-up and
a buffer copy per read, tens of microseconds of a read that is otherwise a dict lookup.
:class:`Wire` takes the socket over once the client is authenticated: bytes arrive in
``data_received``, complete packets (joined across 16 MB frames) go to the connection's
synchronous fast path (a write: to the group commit, answered when done), or else to a
task, while later packets wait their turn; replies
are written with one ``transport.write`` per batch of packets. A packet over
``max_allowed_packet`` is dropped as it arrives and answered with error 1153; the
connection stays in step.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Protocol


class PacketHandler(Protocol):
    """What answers the packets (:class:`rivulet.server.mysql.protocol.RivuletConnection`)."""

    stream: Any

    def fast(self, data: bytes, seq: int) -> bool | asyncio.Future[bool]:
        """Answer at once if it can; a future for the answer otherwise."""
        ...

    async def slow(self, data: bytes, seq: int) -> bool:
        """Any command; False when the connection is to be closed."""
        ...

    def too_large(self, total: int, seq: int) -> None:
        """Answer a packet over the size limit (dropped unread)."""
        ...


MAX_PAYLOAD = 0xFFFFFF  # a packet this long continues in the next one


class PacketTooLarge(Exception):
    """A client packet over ``max_allowed_packet`` (MySQL's error 1153)."""


class Wire(asyncio.Protocol):
    """The socket after authentication. Complete packets are answered in arrival order:
    on the fast path right in ``data_received``; otherwise by a task, while later packets
    wait. Replies are flushed once per batch of packets."""

    def __init__(self, conn: PacketHandler, transport: Any, limit: int) -> None:
        self.conn = conn
        self.transport = transport
        self.limit = limit
        self.buffer = bytearray()
        self.busy = False
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.parts: list[bytes] = []  # frames of a packet of 16 MB or more
        self.size = 0  # its size so far
        self.drop = 0  # bytes of an oversized packet still to drop
        self.dropping = False  # inside an oversized packet (more frames may follow)
        self.seq = 0
        self.fd = _plain_fd(transport)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.busy:
            self.pump()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)

    def pump(self) -> None:
        conn, buf, closed = self.conn, self.buffer, self.closed
        while not self.busy and not closed.done():
            # The common case inline: a whole packet under 16 MB at the buffer's start.
            size = len(buf)
            length = buf[0] | buf[1] << 8 | buf[2] << 16 if size >= 4 else MAX_PAYLOAD
            if (length < MAX_PAYLOAD and size >= 4 + length and length <= self.limit
                    and not (self.drop or self.dropping or self.parts)):
                data: bytes | None = bytes(buf[4:4 + length])
                seq = self.seq = buf[3]
                del buf[:4 + length]
            else:
                packet = self.next_packet()
                if packet is None:
                    break
                data, seq = packet
            if data is None:
                conn.too_large(self.size, seq)
                self.size = 0
            else:
                done = conn.fast(data, seq)
                if done is True:
                    continue
                self.busy = True
                if done is False:
                    done = asyncio.ensure_future(conn.slow(data, seq))
                done.add_done_callback(self.resume)
        self.flush()

    def resume(self, task: asyncio.Future[bool]) -> None:
        self.busy = False
        if task.cancelled() or task.exception() is not None or not task.result():
            self.flush()
            self.transport.close()
            return
        self.pump()

    def flush(self) -> None:
        out = self.conn.stream._buffer
        if out and not self.transport.is_closing():
            data = bytes(out)
            if self.fd >= 0 and not self.transport.get_write_buffer_size():
                # os.write lets go of the GIL while the kernel sends and wakes the client,
                # so the pool's threads run meanwhile (the transport's write holds it).
                try:
                    data = data[os.write(self.fd, data):]
                except OSError:
                    pass  # the transport's write retries it, and reports a broken socket
            if data:
                self.transport.write(data)
        out.clear()

    def next_packet(self) -> tuple[bytes | None, int] | None:
        """The next complete packet and its last sequence id; ``(None, seq)`` for an
        oversized packet once it has been dropped; None until more data arrives."""
        buf = self.buffer
        while True:
            if self.drop:
                n = min(self.drop, len(buf))
                del buf[:n]
                self.drop -= n
                if self.drop:
                    return None
                if not self.dropping:
                    return None, self.seq
            if len(buf) < 4:
                return None
            length = buf[0] | buf[1] << 8 | buf[2] << 16
            self.seq = buf[3]
            more = length == MAX_PAYLOAD
            if self.dropping or self.size + length > self.limit:
                self.size += length
                self.parts = []
                del buf[:4]
                self.drop, self.dropping = length, more
                if not length:
                    return None, self.seq
                continue
            if len(buf) < 4 + length:
                return None
            payload = bytes(buf[4:4 + length])
            del buf[:4 + length]
            if more or self.parts:
                self.parts.append(payload)
                self.size += length
                if more:
                    continue
                payload = b"".join(self.parts)
                self.parts = []
            self.size = 0
            return payload, self.seq


def _plain_fd(transport: Any) -> int:
    """The socket's descriptor when bytes may be written to it directly (not under TLS),
    else -1."""
    sock = transport.get_extra_info("socket")
    if sock is None or transport.get_extra_info("ssl_object") is not None:
        return -1
    return sock.fileno()
