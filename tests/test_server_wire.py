"""How :class:`rivulet.server.mysql.wire.Wire` writes replies: straight to a plain socket (the
GIL released during the send) while the transport has nothing queued, and through the
transport otherwise, so that bytes always leave in the order they were answered."""

from __future__ import annotations

import asyncio
import socket
from types import SimpleNamespace
from typing import Any

from rivulet.server.mysql.wire import Wire


class RecordingTransport:
    """A transport over one end of a socket pair that records what it is asked to write
    and keeps it queued (as a transport does while the socket's buffer is full)."""

    def __init__(self, sock: socket.socket, tls: bool = False) -> None:
        self.sock, self.tls = sock, tls
        self.queued = bytearray()

    def get_extra_info(self, name: str) -> Any:
        return {"socket": self.sock, "ssl_object": object() if self.tls else None}.get(name)

    def get_write_buffer_size(self) -> int:
        return len(self.queued)

    def is_closing(self) -> bool:
        return False

    def write(self, data: bytes) -> None:
        self.queued += data


def received(sock: socket.socket) -> bytes:
    out = bytearray()
    while True:
        try:
            chunk = sock.recv(1 << 20)
        except BlockingIOError:
            return bytes(out)
        if not chunk:
            return bytes(out)
        out += chunk


def flushed(tls: bool, replies: list[bytes]) -> tuple[bytes, bytes]:
    """Flush each reply in turn through a Wire; what the peer received directly, and what
    the transport was left to send."""
    ours, peer = socket.socketpair()
    ours.setblocking(False)
    peer.setblocking(False)
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    transport = RecordingTransport(ours, tls)
    buffer = bytearray()
    conn = SimpleNamespace(stream=SimpleNamespace(_buffer=buffer))

    async def run() -> bytes:
        wire = Wire(conn, transport, 1 << 24)  # type: ignore[arg-type]
        direct = bytearray()
        for reply in replies:
            buffer.extend(reply)
            wire.flush()
            assert not buffer
            direct += received(peer)
        return bytes(direct)

    try:
        return asyncio.run(run()), bytes(transport.queued)
    finally:
        ours.close()
        peer.close()


def test_a_reply_goes_straight_to_the_socket_and_the_rest_to_the_transport() -> None:
    small = b"ok packet"
    direct, queued = flushed(False, [small])
    assert (direct, queued) == (small, b"")
    big = bytes(range(256)) * 4096  # 1 MB: more than the socket takes at once
    direct, queued = flushed(False, [big])
    assert direct and queued
    assert direct + queued == big


def test_replies_keep_their_order_once_the_transport_holds_bytes() -> None:
    big, after = b"A" * (1 << 20), b"second reply"
    direct, queued = flushed(False, [big, after])
    assert direct + queued == big + after
    assert queued.endswith(after)  # not sent ahead of the first reply's queued tail


def test_tls_replies_go_through_the_transport_only() -> None:
    direct, queued = flushed(True, [b"encrypted by the transport"])
    assert (direct, queued) == (b"", b"encrypted by the transport")
