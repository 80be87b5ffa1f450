"""URL redaction: mask the secrets of a URL (userinfo, key-like parameters) before it is shown.

Secrets never reach an output: :func:`redact_text` masks HTTP credentials written out
(``Bearer …``, ``Basic …``, an ``Authorization`` value), and :func:`redact_url` masks
the password of a URL's userinfo
(``http://user:***@host``) and the values of key-like query parameters; every
:class:`~ragassay.endpoint.EndpointError` message and every dump of an
:class:`~ragassay.endpoint.EndpointConfig` goes through it.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, unquote_plus, urlsplit, urlunsplit

MASK = "***"

# Query (or fragment) parameters whose value is a credential: api_key, key, token, sig, …
_SECRET_PARAM = re.compile(r"key|token|secret|passw|pwd|auth|sig|credential|session", re.I)
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")
# An HTTP credential written out: "Bearer <token>", "Basic <base64>" (a server that echoes
# our Authorization header in its error body), and "Authorization: <anything>" up to the
# end of the line or of a quoted value.
_SCHEME_TOKEN = re.compile(r"\b(Bearer|Basic|Token|Digest)(\s+)[A-Za-z0-9._~+/=:-]{8,}",
                           re.IGNORECASE)
_AUTH_HEADER = re.compile(r"""(\bauthorization["']?\s*[:=][\s"']*)(?![\s"']*\*\*\*)"""
                          r"""([^"'\r\n,}]+)""", re.IGNORECASE)


def _mask_params(text: str) -> str:
    pieces = []
    for piece in text.split("&"):
        name, eq, value = piece.partition("=")
        if eq and value and _SECRET_PARAM.search(unquote_plus(name)):
            piece = f"{name}={MASK}"
        pieces.append(piece)
    return "&".join(pieces)


def redact_url(url: str) -> str:
    """``url`` safe to show: the password of its userinfo masked (``http://user:***@host``;
    a user name alone, which is then usually the key, masked whole: ``http://***@host``),
    and the values of key-like query and fragment parameters (``api_key``, ``key``,
    ``token``, ``sig``, ``secret``, …) masked. A URL without secrets comes back unchanged."""
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unbalanced IPv6 bracket: mask any userinfo by pattern
        return re.sub(r"(://)[^/@\s]*@", rf"\1{MASK}@", url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, colon, _password = userinfo.partition(":")
        netloc = f"{user}:{MASK}@{hostport}" if colon else f"{MASK}@{hostport}"
    return urlunsplit((parts.scheme, netloc, parts.path, _mask_params(parts.query),
                       _mask_params(parts.fragment)))


def redact_text(text: str) -> str:
    """``text`` with every URL in it passed through :func:`redact_url`, and every
    credential written out masked: the token after ``Bearer`` / ``Basic`` / ``Token`` /
    ``Digest``, and the value of an ``Authorization`` header or field (``Authorization:
    Basic dXNlcjpwdw==`` → ``Authorization: ***``)."""
    text = _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), text)
    text = _AUTH_HEADER.sub(lambda m: m.group(1) + MASK, text)
    return _SCHEME_TOKEN.sub(lambda m: m.group(1) + m.group(2) + MASK, text)


def url_secrets(url: str) -> list[str]:
    """The secret parts of ``url`` (userinfo password, or a lone user name; key-like
    parameter values), raw and percent-decoded, longest first: what :func:`redact_url`
    masks, for scrubbing text where they may appear outside the URL."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found: set[str] = set()
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        user, colon, password = userinfo.partition(":")
        found.add(password if colon else user)
    for text in (parts.query, parts.fragment):
        for piece in text.split("&"):
            name, eq, value = piece.partition("=")
            if eq and value and _SECRET_PARAM.search(unquote_plus(name)):
                found.add(value)
    out = {v for s in found for v in (s, unquote(s), unquote_plus(s)) if v}
    return sorted(out, key=len, reverse=True)
