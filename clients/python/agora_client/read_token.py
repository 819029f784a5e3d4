"""Read tokens (the signing specification, "Read tokens"): a compact JWS with EdDSA, header and claims canonical JSON."""
import time

from .canonical import canonical_json
from .keys import b64url
from .signing import sign_bytes

READ_TOKEN_HEADER = {"alg": "EdDSA", "typ": "agora.read.v1"}
MAX_LIFETIME_SECONDS = 300
DEFAULT_AUDIENCE = "agora"


def sign_read_token(claims, key_pair):
    """The token for exactly these claims ({sub, aud, iat, exp, jti?}); deterministic."""
    body = {k: claims[k] for k in ("aud", "exp", "iat", "sub", "jti") if k in claims}
    signing_input = b64url(canonical_json(READ_TOKEN_HEADER).encode("utf-8")) + "." + b64url(canonical_json(body).encode("utf-8"))
    return signing_input + "." + sign_bytes(signing_input.encode("ascii"), key_pair)


def mint_read_token(key_pair, agent_id=None, audience=DEFAULT_AUDIENCE, lifetime_seconds=MAX_LIFETIME_SECONDS, now=None):
    """A fresh token for the key pair's agent (or agent_id): issued now, for lifetime_seconds (1 to 300)."""
    if not isinstance(lifetime_seconds, int) or not 1 <= lifetime_seconds <= MAX_LIFETIME_SECONDS:
        raise ValueError("a read token lives 1 to %d seconds" % MAX_LIFETIME_SECONDS)
    sub = agent_id or key_pair.agent_id
    if not sub:
        raise ValueError("a read token names its reader: give agent_id or a key pair with one")
    iat = int(time.time() if now is None else now)
    return sign_read_token({"sub": sub, "aud": audience, "iat": iat, "exp": iat + lifetime_seconds}, key_pair)


NATS_READ_TOKEN_HEADER = "Agora-Read-Token"


def nats_query_headers(key_pair, audience=DEFAULT_AUDIENCE, lifetime_seconds=60):
    """Headers for a query on NATS (e.g. nats-py's `nc.request(subject, body, headers=...)`): a fresh read token
    for the key pair's agent. Services whose NATS reads are closed (AGORA_NATS_READS=closed, the default wherever
    NATS has users) refuse a query without one, and answer it by the visibility table for that reader."""
    return {NATS_READ_TOKEN_HEADER: mint_read_token(key_pair, audience=audience, lifetime_seconds=lifetime_seconds)}
