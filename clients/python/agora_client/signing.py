"""Domain-tagged Ed25519 signatures: the UTF-8 of `tag + "\n" + canonical_json(value)`."""
import uuid
from datetime import datetime, timezone

from cryptography.exceptions import InvalidSignature

from .canonical import canonical_json
from .keys import b64url, b64url_decode, public_key_object

COMMAND_TAG = "agora.command.v1"
RESOLUTION_TAG = "agora.dialectic.resolution.v1"
SIGNED_FIELDS = ("commandId", "type", "actor", "issuedAt", "payload", "correlationId", "causationId")


def domain_signing_bytes(tag, value):
    return (tag + "\n" + canonical_json(value)).encode("utf-8")


def sign_bytes(data, key_pair):
    return b64url(key_pair.private().sign(data))


def verify_bytes(data, signature, public_key):
    if not isinstance(signature, str) or len(signature) != 86:
        return False
    try:
        public_key_object(public_key).verify(b64url_decode(signature), data)
        return True
    except (InvalidSignature, ValueError):
        return False


def signing_bytes(envelope):
    """The bytes a command signature covers: the signed members present in the envelope, nothing else."""
    return domain_signing_bytes(COMMAND_TAG, {k: envelope[k] for k in SIGNED_FIELDS if k in envelope})


def now_iso():
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def sign_command(command_type, actor, payload, key_pair, command_id=None, issued_at=None, correlation_id=None, causation_id=None):
    """A signed command envelope, ready to POST to /v1/commands or to send on its NATS subject."""
    envelope = {"commandId": command_id or str(uuid.uuid4()), "type": command_type, "actor": actor, "issuedAt": issued_at or now_iso(), "payload": payload}
    if correlation_id is not None:
        envelope["correlationId"] = correlation_id
    if causation_id is not None:
        envelope["causationId"] = causation_id
    envelope["signature"] = sign_bytes(signing_bytes(envelope), key_pair)
    return envelope


def verify_command(envelope, public_key):
    return verify_bytes(signing_bytes(envelope), envelope.get("signature"), public_key)


def envelopes_from_metadata(metadata, payload):
    """The signed envelopes an event's metadata may stand for (the signing specification, re-verifying from the log)."""
    if not all(isinstance(metadata.get(k), str) for k in ("commandId", "commandType", "actor", "issuedAt", "signature")):
        return []
    base = {"commandId": metadata["commandId"], "type": metadata["commandType"], "actor": metadata["actor"], "issuedAt": metadata["issuedAt"], "payload": payload, "signature": metadata["signature"]}
    if isinstance(metadata.get("causationId"), str):
        base["causationId"] = metadata["causationId"]
    correlation = metadata.get("correlationId")
    if not isinstance(correlation, str):
        return [base]
    with_correlation = dict(base, correlationId=correlation)
    return [with_correlation] if correlation != metadata["commandId"] else [base, with_correlation]
