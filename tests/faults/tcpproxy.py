"""A TCP proxy that a test cuts: the outage of a real PostgreSQL or Redis, as a client sees it.

``TcpProxy(port)`` listens on 127.0.0.1 (:attr:`TcpProxy.port`) and forwards to the service;
:meth:`TcpProxy.cut` closes every open connection and, until :meth:`TcpProxy.restore`,
closes every new one at once (the client gets "connection closed" / "reset" at once, as
when the service is down or restarting).
"""

from __future__ import annotations

import socket
import threading


class TcpProxy:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1"):
        self.target = (target_host, target_port)
        self.down = False
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True, name="tcpproxy").start()

    def url(self, scheme_url: str) -> str:
        """``scheme_url`` (a service URL naming the target port) pointed at the proxy."""
        return scheme_url.replace(f":{self.target[1]}", f":{self.port}", 1)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            if self.down:
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._conns |= {client, upstream}
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                if self.down:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                self._drop(s)

    def _drop(self, sock: socket.socket) -> None:
        with self._lock:
            self._conns.discard(sock)
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()

    def cut(self) -> None:
        """Close every connection; refuse new ones until :meth:`restore`."""
        self.down = True
        with self._lock:
            conns = list(self._conns)
        for sock in conns:
            self._drop(sock)

    def restore(self) -> None:
        self.down = False

    def close(self) -> None:
        self._closed = True
        self.cut()
        self._server.close()
