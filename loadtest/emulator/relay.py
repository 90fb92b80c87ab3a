"""The throttling emulator on the wire: a keep-alive HTTP/1.1 relay on gevent's StreamServer.

Under load the emulator must cost little beside Azurite (both share the generator's machine), so
it relays bytes as they came, parsing only what the budgets need: the request line, the framing
headers, the body (a write's PartitionKey, a batch's operations) and a query's answer (the rows it
returned; a filtered query's key range listed from upstream once the answer has gone: ``queries``).
One upstream connection per client connection, Nagle off both ways. SharedKey signs
neither host nor port, so signatures hold. A request the budgets refuse is answered here as Azure
answers it; when the upstream cannot be reached, the client's connection is closed, as a dead
service's would be. Its sockets are gevent's own, so ``loadtest emulator`` runs without Locust and without
monkey-patching the interpreter.
"""

from __future__ import annotations

import errno
import socket as stdlib_socket
import time
from collections import Counter
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urlsplit

from gevent import socket  # cooperative sockets, used as they are: the emulator patches nothing
from gevent.server import StreamServer

from ..exit_codes import UsageError
from .budgets import Budgets
from .queries import Query, continuation, listed, returned, rows_of
from .request_log import RequestLog
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


class _Upstream:
    """One kept-alive connection to the table service (Nagle off), opened again when the service closed it."""

    def __init__(self, address: tuple[str, int]) -> None:
        self.address = address
        self.sock: socket.socket | None = None
        self.answers: BinaryIO | None = None
        self._where: tuple[int, int, int, tuple] | None = None  # the address resolved, once

    def _connect(self) -> socket.socket:
        """A connection to the upstream, its address resolved once by the C library. gevent's resolver starts a thread
        pool on first use, whose module imports ``gevent.monkey``: the emulator patches nothing, and a test that blocks
        that import saw it fail a relayed request (under load, on a fresh clone)."""
        if self._where is None:
            family, kind, proto, _, where = stdlib_socket.getaddrinfo(*self.address, type=stdlib_socket.SOCK_STREAM)[0]
            self._where = (family, kind, proto, where)
        family, kind, proto, where = self._where
        sock = socket.socket(family, kind, proto)
        try:
            sock.connect(where)  # numeric: gevent connects without resolving it again
        except OSError:
            sock.close()
            raise
        return sock

    def exchange(self, request: bytes, method: bytes) -> tuple[bytes, list[bytes], int, bytes, bytes]:
        """Send ``request``: the answer's head, its lines, status, body as sent and body decoded."""
        for reused in (self.sock is not None, False):
            if self.sock is None:
                self.sock = self._connect()
                self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.answers = self.sock.makefile("rb")
            try:
                self.sock.sendall(request)
                head, lines = _head(self.answers)
                break
            except (_Closed, OSError):
                self.close()
                if not reused:
                    raise
                # the upstream closed an idle kept-alive connection (Azurite after 5 s): send again on a new one
        status = int(lines[0].split(b" ", 2)[1])
        length, chunked, close = _framing(lines)
        if method == b"HEAD" or status in _NO_BODY or 100 <= status < 200:
            raw, body = b"", b""
        else:
            raw, body = _body(self.answers, length, chunked, until_close=length is None and not chunked)
        if close or (length is None and not chunked and raw):
            self.close()
        return head, lines, status, raw, body

    def close(self) -> None:
        for stream in (self.answers, self.sock):
            if stream is not None:
                stream.close()
        self.sock = self.answers = None


class Relay:
    """One client connection at a time per greenlet (StreamServer's handler), relayed to ``upstream``."""

    def __init__(self, upstream: str, throttle: Throttle, log: RequestLog | None = None) -> None:
        parts = urlsplit(upstream if "://" in upstream else f"http://{upstream}")  # checked: ``process.checked_upstream``
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.throttle = throttle
        self.log = log  # every request and its answer, as Azure's logs record them (``--request-log``)

    def handle(self, client: socket.socket, address: tuple[str, int]) -> None:
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        reader = client.makefile("rb")
        upstream = _Upstream(self.upstream)
        clock = time.time if self.log is not None else _untimed  # requests are timed only when recorded
        try:
            while True:
                head, lines = _head(reader)
                started = clock()
                method, target = lines[0].split(b" ", 2)[:2]
                length, chunked, close = _framing(lines)
                raw_body, body = _body(reader, length, chunked)
                path, _, query = target.decode("latin-1").partition("?")
                refusal, read = self.throttle.refusal(method.decode(), path, query, body)
                if refusal is not None:
                    client.sendall(refusal)
                    self._record(started, 0.0, lines, (len(head), len(raw_body)), _parts(refusal), address)
                    continue
                if read is not None and read.forward is not None:  # its answer cut short, as Azure cuts pages
                    head = lines[0].replace(target, f"{path}?{read.forward}".encode("latin-1"), 1) + head[len(lines[0]) :]
                asked = clock()
                answer_head, answer_lines, status, a_raw, a_body = upstream.exchange(head + raw_body, method)
                served, answer = clock(), (answer_head, a_raw)
                if read is None or status != 200:
                    client.sendall(answer_head + a_raw)
                else:
                    rows = rows_of(a_body)
                    refusal = self.throttle.late_refusal(read, rows)
                    client.sendall(refusal or answer_head + a_raw)
                    if refusal is None:
                        listed = self._listed(upstream, read, path, lines, answer_lines) if read.listing else None
                        self.throttle.charge(listed if listed is not None else returned(rows or [], read.partition))
                    else:
                        answer = _parts(refusal)
                self._record(started, served - asked, lines, (len(head), len(raw_body)), answer, address)
                if close:
                    return
        except (_Closed, OSError, ValueError, IndexError):
            return  # the client left, spoke something else, or the upstream is gone: close, as a dead service would
        finally:
            upstream.close()
            for stream in (reader, client):
                stream.close()

    def _record(
        self,
        started: float,
        server_s: float,
        lines: list[bytes],
        request_bytes: tuple[int, int],
        answer: tuple[bytes, bytes],
        address: tuple[str, int],
    ) -> None:
        """The request and its answer into the request log, if one is kept."""
        if self.log is not None:
            self.log.write(
                started=started, ended=time.time(), server_ms=server_s * 1000, head=lines, request_bytes=request_bytes,
                answer=answer, caller=_caller(address),
            )  # fmt: skip

    @staticmethod
    def _listed(
        upstream: _Upstream, read: Query, path: str, lines: list[bytes], answer_lines: list[bytes]
    ) -> Counter[str | None] | None:
        """The rows a filtered query scanned per PartitionKey: its key range's keys listed from upstream, from where
        it started to where its answer stopped, with the request's own headers (SharedKey signs neither the query
        string nor the host). None if the service would not list them (then it is charged what it returned)."""
        stop = continuation(answer_lines)[1]
        headers = b"".join(lines[1:]) + b"\r\n"
        counted: Counter[str | None] = Counter()
        resume = read.resume
        while True:
            target = f"{path}?{read.listing}" + (f"&{resume}" if resume else "")
            _, page_lines, status, _, page = upstream.exchange(f"GET {target} HTTP/1.1\r\n".encode("latin-1") + headers, b"GET")
            if status != 200:
                return None
            resume = continuation(page_lines)[0]
            if listed(counted, page, stop) or not resume:
                return counted


def _untimed() -> float:
    return 0.0


def _parts(answer: bytes) -> tuple[bytes, bytes]:
    """An answer the emulator made (a refusal): its head and its body."""
    head, _, body = answer.partition(b"\r\n\r\n")
    return head + b"\r\n\r\n", body


def _caller(address: tuple[str, int] | object) -> str:
    return f"{address[0]}:{address[1]}" if isinstance(address, tuple) else str(address)


def _listener(host: str, port: int) -> socket.socket:
    """The emulator's listening socket (IPv4, as the tool's runs reach it), or one line naming ``--host`` or ``--port``
    and why it cannot be bound (no such address on this machine, a port in use)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
        listener.listen(1024)
    except (OSError, UnicodeError, ValueError) as err:  # unresolvable, not this machine's, in use; a NUL, a long label
        listener.close()
        flag = f"--port {port}" if getattr(err, "errno", None) in (errno.EADDRINUSE, errno.EACCES) else f"--host {host[:200]!r}"
        why = " ".join(str(getattr(err, "strerror", None) or err).split())
        raise UsageError(
            f"{flag}: cannot listen on {host[:200]!r} port {port} ({why}); valid: an IPv4 address or name of this machine "
            "(127.0.0.1; 0.0.0.0 for every interface) and a free port"
        ) from None
    return listener


def serve(
    upstream: str,
    host: str,
    port: int,
    budgets: Budgets,
    *,
    splits_file: Path | None = None,
    request_log: Path | None = None,
) -> None:
    """Run the emulator until killed (``loadtest emulator``); each range split appended to ``splits_file``, each
    request and its answer to ``request_log``."""
    listener = _listener(host, port)  # first: an address it cannot take is refused before anything is made
    log = RequestLog(request_log, host=host, port=port) if request_log is not None else None
    relay = Relay(upstream, Throttle(budgets, splits_file=splits_file), log)
    print(
        f"emulator: http://{host}:{port} -> {upstream} "
        f"(partition {budgets.partition_rate:g}/s, account {budgets.account_rate:g}/s)",
        flush=True,
    )
    StreamServer(listener, relay.handle).serve_forever()
