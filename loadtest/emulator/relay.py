"""The throttling emulator on the wire: a keep-alive HTTP/1.1 relay on gevent's StreamServer.

Under load the emulator must cost little beside Azurite (both share the generator's machine), so
it relays bytes as they came, parsing only what the budgets need: the request line, the framing
headers, the body (a write's PartitionKey, a batch's operations) and a query's answer (the rows it
returned). One upstream connection per client connection, Nagle off both ways. SharedKey signs
neither host nor port, so signatures hold. A request the budgets refuse is answered here as Azure
answers it; when the upstream cannot be reached, the client's connection is closed, as a dead
service's would be.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import BinaryIO

from gevent.server import StreamServer

from .budgets import Budgets
from .throttle import Throttle

__all__ = ["serve"]

MAX_HEAD_LINES = 200
_NO_BODY = (204, 304)


class _Closed(Exception):
    """The peer closed the connection (or sent something that is not HTTP/1.1)."""


def _head(stream: BinaryIO) -> tuple[bytes, list[bytes]]:
    """The raw head (start line and headers, blank line included) and its lines; _Closed at EOF."""
    first = stream.readline(65537)
    if not first:
        raise _Closed
    lines, raw = [first], [first]
    while True:
        line = stream.readline(65537)
        if not line:
            raise _Closed
        raw.append(line)
        if line in (b"\r\n", b"\n"):
            return b"".join(raw), lines
        lines.append(line)
        if len(lines) > MAX_HEAD_LINES:
            raise _Closed


def _framing(lines: list[bytes]) -> tuple[int | None, bool, bool]:
    """(Content-Length, chunked, Connection: close) from a head's header lines."""
    length, chunked, close = None, False, False
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value.strip())
        elif name == b"transfer-encoding":
            chunked = b"chunked" in value.lower()
        elif name == b"connection":
            close = b"close" in value.lower()
    return length, chunked, close


def _body(stream: BinaryIO, length: int | None, chunked: bool, *, until_close: bool = False) -> tuple[bytes, bytes]:
    """(the body as sent, the body decoded) framed by Content-Length, chunks, or the connection's end."""
    if chunked:
        raw, data = [], []
        while True:
            size_line = stream.readline(1024)
            if not size_line:
                raise _Closed
            raw.append(size_line)
            size = int(size_line.split(b";", 1)[0].strip(), 16)
            if size == 0:
                while True:  # trailers, then the blank line
                    trailer = stream.readline(65537)
                    raw.append(trailer)
                    if trailer in (b"\r\n", b"\n", b""):
                        break
                return b"".join(raw), b"".join(data)
            chunk = stream.read(size + 2)
            raw.append(chunk)
            data.append(chunk[:size])
    if length is not None:
        data = stream.read(length) if length else b""
        if len(data) != length:
            raise _Closed
        return data, data
    data = stream.read() if until_close else b""
    return data, data


class Relay:
    """One client connection at a time per greenlet (StreamServer's handler), relayed to ``upstream``."""

    def __init__(self, upstream: str, throttle: Throttle) -> None:
        host_port = upstream.split("://", 1)[-1].split("/", 1)[0]
        host, _, port = host_port.rpartition(":")
        self.upstream = (host.strip("[]") or "127.0.0.1", int(port or 80))
        self.throttle = throttle

    def handle(self, client: socket.socket, _address: object) -> None:
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        reader = client.makefile("rb")
        server: socket.socket | None = None
        answers: BinaryIO | None = None
        try:
            while True:
                head, lines = _head(reader)
                method, target = lines[0].split(b" ", 2)[:2]
                length, chunked, close = _framing(lines)
                raw_body, body = _body(reader, length, chunked)
                path, _, query = target.decode("latin-1").partition("?")
                refusal, query_pk = self.throttle.refusal(method.decode(), path, query, body)
                if refusal is not None:
                    client.sendall(refusal)
                    continue
                for reused in (server is not None, False):
                    if server is None:
                        server = socket.create_connection(self.upstream, timeout=None)
                        server.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                        answers = server.makefile("rb")
                    try:
                        server.sendall(head + raw_body)
                        answer_head, answer_lines = _head(answers)
                        break
                    except (_Closed, OSError):
                        answers.close()
                        server.close()
                        server = answers = None
                        if not reused:
                            raise
                        # the upstream closed an idle kept-alive connection (Azurite after 5 s): send again on a new one
                status = int(answer_lines[0].split(b" ", 2)[1])
                a_length, a_chunked, a_close = _framing(answer_lines)
                if method == b"HEAD" or status in _NO_BODY or 100 <= status < 200:
                    a_raw, a_body = b"", b""
                else:
                    a_raw, a_body = _body(answers, a_length, a_chunked, until_close=a_length is None and not a_chunked)
                client.sendall(answer_head + a_raw)
                if query_pk is not None:
                    self.throttle.answered(query_pk, status, a_body)
                if a_close or (a_length is None and not a_chunked and a_raw):
                    answers.close()
                    server.close()
                    server = answers = None
                if close:
                    return
        except (_Closed, OSError, ValueError, IndexError):
            return  # the client left, spoke something else, or the upstream is gone: close, as a dead service would
        finally:
            for stream in (answers, server, reader, client):
                if stream is not None:
                    stream.close()


def serve(upstream: str, host: str, port: int, budgets: Budgets, splits_file: Path | None = None) -> None:
    """Run the emulator until killed (``loadtest emulator``); each range split appended to ``splits_file``."""
    relay = Relay(upstream, Throttle(budgets, splits_file=splits_file))
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(1024)
    print(
        f"emulator: http://{host}:{port} -> {upstream} "
        f"(partition {budgets.partition_rate:g}/s, account {budgets.account_rate:g}/s)",
        flush=True,
    )
    StreamServer(listener, relay.handle).serve_forever()
