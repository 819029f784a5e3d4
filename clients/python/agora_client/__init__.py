"""Reference client of Agora in Python: keys, RFC 8785 canonical JSON, signed commands, queries over HTTP.

Standard library and `cryptography` only. The signing specification is in the README of the
repository and in libs/contracts/generated/asyncapi.json (info.description).
"""
from .canonical import canonical_json
from .keys import KeyPair, generate_key_pair, key_pair_from_secret, read_key_file
from .signing import COMMAND_TAG, RESOLUTION_TAG, domain_signing_bytes, sign_bytes, verify_bytes, signing_bytes, sign_command, verify_command, envelopes_from_metadata
from .http import AgoraError, AgoraHttpClient
from .read_token import NATS_READ_TOKEN_HEADER, mint_read_token, nats_query_headers, sign_read_token

__all__ = [
    "canonical_json", "KeyPair", "generate_key_pair", "key_pair_from_secret", "read_key_file",
    "COMMAND_TAG", "RESOLUTION_TAG", "domain_signing_bytes", "sign_bytes", "verify_bytes", "signing_bytes",
    "sign_command", "verify_command", "envelopes_from_metadata", "AgoraError", "AgoraHttpClient",
    "mint_read_token", "sign_read_token", "nats_query_headers", "NATS_READ_TOKEN_HEADER",
]
