"""One guarded HTTP(S) GET for web_fetch: bounded in time, bytes and redirects, sending nothing of
the user's, and never reaching a loopback or private address it was not allowed to.

- Every hop's host is resolved here and each of its addresses checked; the request then goes to
  the address that was checked (the URL carries the IP, the Host header and TLS's server name the
  host), so a name that answers differently the second time (DNS rebinding) changes nothing.
- A loopback, private, link-local or otherwise special address is refused unless ``may_reach``
  says the URL was allowed by name (a rule, or the user's answer about that very URL).
- Redirects are followed one hop at a time, at most MAX_REDIRECTS, each target checked again: the
  same host always, another one only when ``may_follow`` says the permission engine allows it
  without asking; otherwise the redirect is the result, for the model to fetch (and the user to be
  asked about) itself.
- A plain client: no environment proxies (nor their credentials), no cookie kept from one hop to
  the next, no auth, a tmg User-Agent.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from typing import Awaitable, Callable
from urllib.parse import urljoin, urlsplit, urlunsplit

from tmg import __version__

MAX_BYTES = 2_000_000  # read at most this much of a body; the rest is cut (and said)
MAX_REDIRECTS = 5
CONNECT_TIMEOUT_S = 10.0
USER_AGENT = f"tmg/{__version__} (web_fetch; +https://pypi.org/project/tmg/)"
_REDIRECTS = (301, 302, 303, 307, 308)


class FetchError(Exception):
    """The fetch did not happen or failed; the message says why, for the model and the user."""


@dataclass(frozen=True)
class Fetched:
    url: str  # after the redirects followed
    status: int
    content_type: str  # the media type, lower case, without parameters
    charset: str | None
    body: bytes
    cut: bool  # the body was longer than MAX_BYTES
    redirect: str | None = None  # a redirect not followed: where it points


def special_address(host: str) -> str | None:
    """Why ``host`` (an IP literal, or localhost) is not a public address, or None."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return f"{host} is a loopback address"
    try:
        ip = ipaddress.ip_address(name)
    except ValueError:
        return None
    return _why_special(ip, host)


def _why_special(ip: ipaddress.IPv4Address | ipaddress.IPv6Address, shown: str) -> str | None:
    mapped = getattr(ip, "ipv4_mapped", None)
    if mapped is not None:
        ip = mapped
    if ip.is_loopback:
        return f"{shown} is a loopback address"
    if ip.is_private or ip.is_link_local or ip.is_multicast or ip.is_reserved or ip.is_unspecified:
        return f"{shown} is a private address"
    return None


async def resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` has (an IP literal is its own)."""
    name = host.strip("[]")
    try:
        ipaddress.ip_address(name)
        return [name]
    except ValueError:
        pass
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FetchError(f"cannot resolve {host} ({exc.strerror or exc})") from None
    return list(dict.fromkeys(info[4][0] for info in infos))


Resolver = Callable[[str, int], Awaitable[list[str]]]


async def get(url: str, *, may_reach: Callable[[str], bool], may_follow: Callable[[str], bool],
              timeout: float, resolver: Resolver = resolve) -> Fetched:
    """GET ``url`` within ``timeout`` seconds (redirects included); ``resolver`` gives a host's
    addresses (the system's DNS)."""
    try:
        return await asyncio.wait_for(_get(url, may_reach, may_follow, resolver), timeout)
    except asyncio.TimeoutError:
        raise FetchError(f"no complete answer from {url} within {timeout:g} s") from None


async def _get(url: str, may_reach: Callable[[str], bool], may_follow: Callable[[str], bool],
               resolver: Resolver) -> Fetched:
    import httpx

    # trust_env=False: no HTTP(S)_PROXY (nor the credentials a proxy URL carries), no .netrc.
    async with httpx.AsyncClient(trust_env=False, follow_redirects=False, http2=False,
                                 timeout=httpx.Timeout(CONNECT_TIMEOUT_S)) as client:
        first_host = _host(url)
        for hop in range(MAX_REDIRECTS + 1):
            response = await _one_hop(client, url, may_reach, resolver)
            try:
                location = response.headers.get("location")
                if response.status_code in _REDIRECTS and location:
                    target = urljoin(url, location)
                    if urlsplit(target).scheme not in ("http", "https"):
                        raise FetchError(f"{url} redirects to {target}, which is not an http(s) URL")
                    if hop == MAX_REDIRECTS:
                        raise FetchError(f"{url} redirected more than {MAX_REDIRECTS} times; stopped")
                    if _host(target) != first_host and not may_follow(target):
                        return Fetched(url, response.status_code, "", None, b"", False, redirect=target)
                    url = target
                    continue
                body, cut = await _read(response)
                media, charset = _media(response.headers.get("content-type", ""))
                return Fetched(url, response.status_code, media, charset, body, cut)
            finally:
                await response.aclose()
    raise AssertionError("unreachable")


async def _one_hop(client, url: str, may_reach: Callable[[str], bool], resolver: Resolver):
    """Send the request for ``url`` to an address of its host that was checked here."""
    import httpx

    parts = urlsplit(url)
    host, port = parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)
    addresses = await resolver(host, port)
    if not addresses:
        raise FetchError(f"{host} has no address")
    special = [why for a in addresses if (why := _why_special(ipaddress.ip_address(a.split("%")[0]), a))]
    if special and not may_reach(url):
        raise FetchError(f"refused: {host} resolves to {special[0].partition(' is ')[0]}, which is "
                         f"{special[0].partition(' is ')[2]}; tmg fetches such addresses only when a rule names the "
                         f"URL (e.g. web_fetch({host}{'' if parts.port is None else f':{port}'}/**) in "
                         "PERMISSIONS.ALLOW)")
    address = addresses[0]
    literal = f"[{address}]" if ":" in address else address
    netloc = literal if parts.port is None else f"{literal}:{parts.port}"
    direct = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
    host_header = parts.netloc.rpartition("@")[2]  # never the userinfo of a URL
    client.cookies.clear()  # a cookie one hop set is not sent back on the next
    request = client.build_request("GET", direct, headers={
        "Host": host_header, "User-Agent": USER_AGENT,
        "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.5",
        "Accept-Encoding": "gzip, deflate"})
    if parts.scheme == "https":
        request.extensions["sni_hostname"] = host  # the certificate is checked against the name
    try:
        return await client.send(request, stream=True)
    except httpx.HTTPError as exc:
        raise FetchError(f"cannot fetch {url} ({type(exc).__name__}: {exc})") from None


async def _read(response) -> tuple[bytes, bool]:
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_BYTES:
            return b"".join(chunks)[:MAX_BYTES], True
    return b"".join(chunks), False


def _media(header: str) -> tuple[str, str | None]:
    media, _, rest = header.partition(";")
    charset = None
    for param in rest.split(";"):
        key, _, value = param.strip().partition("=")
        if key.lower() == "charset" and value:
            charset = value.strip('"\' ').lower()
    return media.strip().lower(), charset


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()
