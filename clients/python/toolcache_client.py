"""A thin client for `toolcache serve` (the /v1/ cache API), stdlib only.

Frameworks that run their own tools ask the cache before running one and
hand it the result afterwards. Two ways to do that:

* begin/complete (recommended): identical concurrent calls run once
  (single-flight); hits teach the cache's policy. ``cached_call`` and the
  ``cached`` decorator wrap a tool function this way.
* lookup/record: stateless, for callers that cannot hold a ticket.

Every cache decision (is the call cacheable, its TTL, what a write
invalidates) is made by the server. If the server is unreachable,
``cached_call`` runs the tool anyway (a cache failure never fails a call).

Example::

    from toolcache_client import ToolCacheClient
    tc = ToolCacheClient("http://127.0.0.1:8090", token="secret")

    @tc.cached(server="weather")
    def get_weather(city):
        return {"temp": 21, "city": city}

    get_weather(city="Paris")   # runs the tool
    get_weather(city="Paris")   # answered by the cache
"""

from __future__ import annotations

import functools
import http.client
import json
import threading
import time
import urllib.parse
from typing import Any, Callable, Optional

__all__ = ["ToolCacheClient", "ToolCacheError"]


class ToolCacheError(Exception):
    """An error answer of the server (status, code, message)."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"toolcache {status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class ToolCacheClient:
    """One client per base URL; thread-safe (one connection per thread)."""

    def __init__(self, base_url: str, token: Optional[str] = None,
                 timeout: float = 60.0):
        u = urllib.parse.urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"base_url must be http(s)://host[:port], got {base_url!r}")
        self._scheme = u.scheme
        self._host = u.hostname
        self._port = u.port
        self._prefix = u.path.rstrip("/")
        self._token = token
        self._timeout = timeout
        self._local = threading.local()
        self._lock = threading.Lock()
        self._conns = []  # every thread's connection, for close()

    def close(self) -> None:
        """Closes every connection this client opened (any thread's)."""
        with self._lock:
            conns, self._conns = self._conns, []
        for c in conns:
            c.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ----------------------------------------------------------- transport
    def _conn(self) -> http.client.HTTPConnection:
        c = getattr(self._local, "conn", None)
        if c is None:
            cls = (http.client.HTTPSConnection if self._scheme == "https"
                   else http.client.HTTPConnection)
            c = cls(self._host, self._port, timeout=self._timeout)
            self._local.conn = c
            with self._lock:
                self._conns.append(c)
        return c

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body, separators=(",", ":")).encode()
            headers["Content-Type"] = "application/json"
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        for attempt in (0, 1):
            c = self._conn()
            try:
                c.request(method, self._prefix + path, body=data, headers=headers)
                resp = c.getresponse()
                raw = resp.read()
                break
            except (http.client.HTTPException, ConnectionError, OSError):
                c.close()
                self._local.conn = None
                if attempt == 1:
                    raise
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            raise ToolCacheError(resp.status, "bad_response", raw[:200].decode(errors="replace"))
        if resp.status >= 400:
            err = (payload or {}).get("error", {}) if isinstance(payload, dict) else {}
            raise ToolCacheError(resp.status, err.get("code", "error"), err.get("message", ""))
        return payload

    # ----------------------------------------------------------- the API
    @staticmethod
    def _call(server: str, tool: str, arguments: Optional[dict], user: Optional[str]) -> dict:
        body = {"server": server, "tool": tool, "arguments": arguments or {}}
        if user:
            body["user"] = user
        return body

    def lookup(self, server: str, tool: str, arguments: Optional[dict] = None,
               user: Optional[str] = None) -> dict:
        """{"hit": True, "result", "ageSeconds"} or a miss with its verdict."""
        return self._request("POST", "/v1/lookup", self._call(server, tool, arguments, user))

    def record(self, server: str, tool: str, arguments: Optional[dict], result: Any,
               latency_seconds: float = 0.0, cost: float = 0.0, is_error: bool = False,
               user: Optional[str] = None) -> dict:
        body = self._call(server, tool, arguments, user)
        body.update(result=result, latencySeconds=latency_seconds, cost=cost, isError=is_error)
        return self._request("POST", "/v1/record", body)

    def begin(self, server: str, tool: str, arguments: Optional[dict] = None,
              user: Optional[str] = None, wait_seconds: Optional[float] = None) -> dict:
        """action: hit | coalesced (with result) | forward (with a ticket,
        or without one after a failed/slow leader: run the tool yourself)."""
        body = self._call(server, tool, arguments, user)
        if wait_seconds is not None:
            body["waitSeconds"] = wait_seconds
        return self._request("POST", "/v1/begin", body)

    def complete(self, ticket: str, result: Any = None, latency_seconds: float = 0.0,
                 cost: float = 0.0, is_error: bool = False) -> dict:
        body = {"ticket": ticket, "latencySeconds": latency_seconds, "cost": cost,
                "isError": is_error}
        if not is_error or result is not None:
            body["result"] = result
        return self._request("POST", "/v1/complete", body)

    def invalidate(self, server: str, resource: Optional[str] = None) -> dict:
        body = {"server": server}
        if resource:
            body["resource"] = resource
        return self._request("POST", "/v1/invalidate", body)

    def explain(self, server: str, tool: str, arguments: Optional[dict] = None) -> dict:
        return self._request("POST", "/v1/explain", self._call(server, tool, arguments, None))

    def stats(self) -> dict:
        return self._request("GET", "/v1/stats")

    # ----------------------------------------------------------- wrappers
    def cached_call(self, server: str, tool: str, arguments: Optional[dict],
                    fn: Callable[[], Any], cost: float = 0.0) -> Any:
        """Runs ``fn()`` unless the cache (or an identical call in flight)
        answers; records its result. Exceptions of ``fn`` propagate (the
        ticket is completed as an error, so waiters run their own call)."""
        try:
            plan = self.begin(server, tool, arguments)
        except (ToolCacheError, OSError, http.client.HTTPException):
            return fn()  # the cache failed: the call still runs
        if plan.get("action") in ("hit", "coalesced"):
            return plan["result"]
        ticket = plan.get("ticket")
        t0 = time.monotonic()
        try:
            result = fn()
        except BaseException:
            if ticket:
                try:
                    self.complete(ticket, None, time.monotonic() - t0, is_error=True)
                except (ToolCacheError, OSError, http.client.HTTPException):
                    pass
            raise
        if ticket:
            try:
                self.complete(ticket, result, time.monotonic() - t0, cost=cost)
            except (ToolCacheError, OSError, http.client.HTTPException):
                pass
        return result

    def cached(self, server: str, tool: Optional[str] = None, cost: float = 0.0):
        """Decorator for a tool function called with keyword arguments."""

        def wrap(fn):
            name = tool or fn.__name__

            @functools.wraps(fn)
            def inner(**kwargs):
                return self.cached_call(server, name, kwargs, lambda: fn(**kwargs), cost=cost)

            return inner

        return wrap
