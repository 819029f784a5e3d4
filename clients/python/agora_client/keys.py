"""Ed25519 keys in Agora's text forms: `ed25519:<base64url>` (public), `ed25519-secret:<base64url seed>`."""
import base64
import json
import os
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

PUBLIC_PREFIX = "ed25519:"
SECRET_PREFIX = "ed25519-secret:"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _raw(text, prefix, what):
    if not text.startswith(prefix) or len(text) != len(prefix) + 43:
        raise ValueError('a %s key is "%s" followed by 43 base64url characters' % (what, prefix))
    return b64url_decode(text[len(prefix):])


@dataclass(frozen=True)
class KeyPair:
    public_key: str
    secret_key: str
    agent_id: str = None

    def private(self):
        return Ed25519PrivateKey.from_private_bytes(_raw(self.secret_key, SECRET_PREFIX, "secret"))


def public_key_object(text):
    return Ed25519PublicKey.from_public_bytes(_raw(text, PUBLIC_PREFIX, "public"))


def key_pair_from_secret(secret_key, agent_id=None):
    private = Ed25519PrivateKey.from_private_bytes(_raw(secret_key, SECRET_PREFIX, "secret"))
    public = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return KeyPair(PUBLIC_PREFIX + b64url(public), secret_key, agent_id)


def generate_key_pair(agent_id=None):
    return key_pair_from_secret(SECRET_PREFIX + b64url(os.urandom(32)), agent_id)


def read_key_file(path):
    """A key file: {"agentId", "publicKey", "secretKey"}; publicKey, when present, must belong to secretKey."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data.get("secretKey"), str):
        raise ValueError("the key file has no secretKey")
    pair = key_pair_from_secret(data["secretKey"], data.get("agentId"))
    if "publicKey" in data and data["publicKey"] != pair.public_key:
        raise ValueError("the key file's publicKey does not belong to its secretKey")
    return pair


def write_key_file(path, pair):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"agentId": pair.agent_id, "publicKey": pair.public_key, "secretKey": pair.secret_key}, f, indent=2)
        f.write("\n")
