"""Credentials recognised by their shape alone: provider tokens, private keys, JWTs.

The other half of the text rule (:mod:`graphtrail._secrets` reads ``key=value``
pairs) finds secrets that nothing names: a token pasted in a question, a key
block a tool printed. The shapes are the published ones of the two scanners a
security review runs over our output -- the plugins of detect-secrets 1.5
(Yelp) and the rules of gitleaks 8 -- so what they would flag, we redact first
(the test suite runs detect-secrets, all plugins, over every byte graphtrail
writes: tests/test_nothing_leaked.py).

Cost: this runs on every traced text. Each shape has a fixed anchor (a prefix
such as ``ghp_``, or a character it cannot do without, such as the dots of a
JWT); ``str`` substring checks on those anchors decide, at C speed, whether a
regex runs at all, and most text has none.

Stdlib only, no graphtrail import: the CLI answers a usage error with it before
anything heavy has loaded.
"""

from __future__ import annotations

import base64
import binascii
import json
import re

__all__ = ["token_spans", "SHAPES"]

REDACTED = "<redacted>"

#: What is recognised, for the docs (docs/spans.md, "Secrets") and the tests.
SHAPES: tuple[str, ...] = (
    "private key blocks: PEM (RSA, DSA, EC, OpenSSH, PKCS#8, encrypted), PGP, SSH2, PuTTY",
    "AWS access key ids (AKIA, ASIA, ABIA, ACCA, A3T, AGPA, AIDA, AROA, AIPA, ANPA, ANVA)",
    "OpenAI / Anthropic sk-..., GitHub gh[pousr]_ and github_pat_, GitLab gl*-, Slack xox*- and webhooks",
    "Stripe [rs]k_live/test_, SendGrid SG., Square sq0, npm_, pypi-, Hugging Face hf_, Google AIza",
    "Twilio AC/SK, Telegram and Discord bot tokens, Mailchimp ...-usN, Artifactory AKC/AP, SoftLayer URLs",
    "JWTs by structure (base64url parts whose header decodes to a JSON object), two or three parts",
    "passwords in scheme://user:password@host URLs and curl -u user:password",
)

# Gate 1: the literal prefixes of _TOKEN_SCAN's alternatives (case-sensitive). Those with
# "_" or "-" are only looked for in text holding that character; the uppercase-A shapes
# (AWS key ids, Google, Artifactory, Twilio) and Twilio's SK by one literal-first regex.
_UNDERSCORE_PREFIXES = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "hf_", "npm_", "k_live_", "k_test_")
_DASH_PREFIXES = ("sk-", "xox", "XOX", "gl", "pypi-", "sq0", "-u", "PuTTY-User-Key-File-")  # "gl": glpat-, gldt-, ...
_OTHER_PREFIXES = ("://", "BEGIN", "eyJ", "SG.", "hooks.slack.com", "softlayer.com", "GR1348941")
_A_GATE = re.compile(r"A(?:KIA|SIA|BIA|CCA|3T|GPA|IDA|ROA|IPA|NPA|NVA|Iza|KC|P[0-9A-F]|C[0-9a-zA-F]{8})|SK[0-9a-zA-F]{8}")


def _may_hold_token(text: str) -> bool:
    if "_" in text:
        for p in _UNDERSCORE_PREFIXES:
            if p in text:
                return True
    if "-" in text:
        for p in _DASH_PREFIXES:
            if p in text:
                return True
    for p in _OTHER_PREFIXES:
        if p in text:
            return True
    return _A_GATE.search(text) is not None


_TOKEN_SCAN = re.compile(
    r"(?P<pem>(?:-{2,5} ?)?BEGIN[ A-Z0-9_-]{0,64}PRIVATE KEY(?: BLOCK)?(?: ?-{2,5})?)"
    r"|(?P<putty>PuTTY-User-Key-File-[0-9]+:)"
    # scheme://user:password@host -- a password may hold "/" or "@" (the last "@" ends it)
    r"|://(?P<url>[^\s/?#@:\"'<>]{0,256}:[^\s\"'<>]{1,256})@"
    # curl -u user:password, --user user:password, --proxy-user=user:password
    r"|(?:^|(?<=[\s\"'=]))(?:-u|-U|--user|--proxy-user)(?:[ \t]+|=)?[\"']?(?P<cli>[^\s:\"'@]{1,256}:[^\s\"']{1,256})"
    r"|(?P<tok>(?:sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}|gh[pousr]_[A-Za-z0-9_]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|(?:A3T[A-Z0-9]|A(?:KIA|SIA|BIA|CCA|GPA|IDA|ROA|IPA|NPA|NVA))[0-9A-Z]{16}"
    r"|(?i:xox[abposr]-[a-z0-9\-]{10,})|AIza[0-9A-Za-z_\-]{30,}"
    r"|gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-[A-Za-z0-9_\-]{20,}|GR1348941[A-Za-z0-9_\-]{20,}"
    r"|hf_[A-Za-z0-9]{30,}|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"
    r"|[rs]k_(?:live|test)_[0-9a-zA-Z]{16,}|SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}|npm_[A-Za-z0-9]{30,}"
    r"|pypi-[A-Za-z0-9_\-]{50,}|sq0(?:csp|atp)-[0-9A-Za-z_\-]{20,}"
    r"|hooks\.slack\.com/services/[A-Za-z0-9_/]+"
    r"|(?:AC|SK)(?:[a-z0-9]{32}|[0-9a-fA-F]{32})"  # Twilio account sid / API key
    r"|[0-9a-z]{32}-us[0-9]{1,2}"  # Mailchimp
    r"|(?:(?<=[\s=:\"'])|^)(?:AKC[a-zA-Z0-9]{10,}|AP[0-9A-F][a-zA-Z0-9]{8,})(?=[\s\"']|$)"  # Artifactory
    r"|api\.softlayer\.com/soap/v3(?:\.1)?/[a-z0-9]{64}))"
)
_PEM_END = re.compile(r"END[ A-Z0-9_-]{0,64}PRIVATE KEY(?: BLOCK)?(?: ?-{2,5})?")
_PUTTY_END = re.compile(r"Private-MAC:[ \t]*[0-9A-Fa-f]*")

# Gate 2: shapes anchored on a common character (":" or "."). Each regex starts with that
# literal (the engine then skips to it at C speed); what must come before it is a fixed-width
# lookbehind, and the start of the token is found by walking back in Python.
_TELEGRAM = re.compile(r":(?<=[0-9]{5}:)[A-Za-z0-9_\-]{34,}")
_DISCORD = re.compile(r"\.(?<=[A-Za-z0-9_\-]{24}\.)[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,}")
_JWT = re.compile(r"e[wy][A-Za-z0-9_\-]{6,}={0,2}\.[A-Za-z0-9_\-]+={0,2}(?:\.[A-Za-z0-9_\-+/=]*)?")
_TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def _back(text: str, at: int, chars: frozenset[str] | str, most: int) -> int:
    """Where the run of ``chars`` that ends at ``at`` starts (at most ``most`` back)."""
    start, low = at, max(0, at - most)
    while start > low and text[start - 1] in chars:
        start -= 1
    return start


def _is_jwt(token: str) -> bool:
    """A JWT (JWS or JWE): its first part is base64url of a JSON object (``{"alg": ...}``)."""
    head = token.split(".", 1)[0].rstrip("=")
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
        return isinstance(json.loads(decoded.decode("utf-8")), dict)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False


def token_spans(text: str, found: list[tuple[int, int, str]]) -> None:
    """Append (start, end, replacement) for every credential ``text`` spells by its shape."""
    if _may_hold_token(text):
        for m in _TOKEN_SCAN.finditer(text):
            kind = m.lastgroup
            if kind == "pem" or kind == "putty":
                end_m = (_PEM_END if kind == "pem" else _PUTTY_END).search(text, m.end())
                found.append((m.start(), end_m.end() if end_m is not None else len(text), REDACTED))
            elif kind == "url" or kind == "cli":
                user_end = m.start(kind) + m.group(kind).index(":") + 1
                found.append((user_end, m.end(kind), REDACTED))
            else:
                found.append((m.start(), m.end(), REDACTED))
    if ":" in text:
        for m in _TELEGRAM.finditer(text):  # 5 to 16 digits, ":", 34+ token characters
            found.append((_back(text, m.start(), "0123456789", 16), m.end(), REDACTED))
    if "." in text:
        for m in _JWT.finditer(text):
            if (m.start() == 0 or text[m.start() - 1] not in _TOKEN_CHARS) and _is_jwt(m.group()):
                found.append((m.start(), m.end(), REDACTED))
        for m in _DISCORD.finditer(text):  # [MNO] and 23 to 25 more, ".", 6, ".", 27+
            start = _back(text, m.start(), _TOKEN_CHARS, 26)
            if text[start] in "MNO" and m.start() - start >= 24:
                found.append((start, m.end(), REDACTED))
