"""The signing test vectors of libs/contracts/generated/test-vectors.json, byte for byte."""
import base64
import json
import os
import unittest

from agora_client import canonical_json, generate_key_pair, nats_query_headers, sign_read_token, domain_signing_bytes, envelopes_from_metadata, key_pair_from_secret, sign_bytes, signing_bytes, verify_bytes, verify_command
from agora_client.keys import b64url

VECTORS = os.environ.get("AGORA_TEST_VECTORS") or os.path.join(os.path.dirname(__file__), "..", "..", "..", "libs", "contracts", "generated", "test-vectors.json")

with open(VECTORS, encoding="utf-8") as f:
    V = json.load(f)


class TestVectors(unittest.TestCase):
    def test_keys(self):
        for k in V["keys"]:
            self.assertEqual(k["secretKey"], "ed25519-secret:" + b64url(bytes.fromhex(k["seedHex"])))
            self.assertEqual(key_pair_from_secret(k["secretKey"]).public_key, k["publicKey"])

    def test_canonical_json(self):
        self.assertGreaterEqual(len(V["canonicalJson"]), 6)
        for c in V["canonicalJson"]:
            out = canonical_json(json.loads(c["input"]))
            self.assertEqual(out, c["canonical"], c["name"])
            self.assertEqual(out.encode("utf-8").hex(), c["canonicalUtf8Hex"], c["name"])

    def test_envelopes(self):
        keys = {k["name"]: key_pair_from_secret(k["secretKey"]) for k in V["keys"]}
        for v in V["envelopes"]:
            data = signing_bytes(v["envelope"])
            self.assertEqual(data.decode("utf-8"), v["signedText"], v["name"])
            self.assertEqual(b64url(data), v["signedBytesBase64url"], v["name"])
            # Ed25519 is deterministic: the same key and bytes give the same signature.
            self.assertEqual(sign_bytes(data, keys[v["signer"]]), v["signature"], v["name"])
            self.assertTrue(verify_command(v["envelope"], v["publicKey"]), v["name"])

    def test_event_metadata(self):
        for m in V["eventMetadata"]:
            candidates = envelopes_from_metadata(m["metadata"], m["metadata"]["commandPayload"])
            self.assertEqual([signing_bytes(c).decode("utf-8") for c in candidates], m["candidates"])
            self.assertEqual([verify_command(c, m["publicKey"]) for c in candidates], m["verifies"])

    def test_domain_tagged(self):
        keys = {k["name"]: key_pair_from_secret(k["secretKey"]) for k in V["keys"]}
        for d in V["domainTagged"]:
            data = domain_signing_bytes(d["tag"], d["value"])
            self.assertEqual(data.decode("utf-8"), d["signedText"])
            self.assertEqual(sign_bytes(data, keys[d["signer"]]), d["signature"])
            self.assertTrue(verify_bytes(data, d["signature"], d["publicKey"]))

    def test_read_tokens(self):
        keys = {k["name"]: key_pair_from_secret(k["secretKey"]) for k in V["keys"]}
        self.assertGreaterEqual(len(V["readTokens"]), 2)
        for r in V["readTokens"]:
            token = sign_read_token(r["claims"], keys[r["signer"]])
            self.assertEqual(token, r["token"], r["name"])
            header, claims, signature = token.split(".")
            self.assertEqual(header + "." + claims, r["signingInput"])
            self.assertEqual(canonical_json(r["claims"]), r["claimsJson"])
            self.assertTrue(verify_bytes(r["signingInput"].encode("ascii"), signature, r["publicKey"]))

    def test_nats_query_headers(self):
        # A query on NATS names its reader with a fresh one-minute token in the Agora-Read-Token header.
        key = generate_key_pair("alice")
        headers = nats_query_headers(key, audience="agora-test")
        self.assertEqual(list(headers), ["Agora-Read-Token"])
        claims_part = headers["Agora-Read-Token"].split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(claims_part + "=" * (-len(claims_part) % 4)))
        self.assertEqual((claims["sub"], claims["aud"], claims["exp"] - claims["iat"]), ("alice", "agora-test", 60))

    def test_must_not_verify(self):
        for v in V["mustNotVerify"]:
            self.assertEqual(signing_bytes(v["envelope"]).decode("utf-8"), v["signedText"])
            self.assertFalse(verify_command(v["envelope"], v["publicKey"]))

    def test_refuses_what_json_cannot_carry(self):
        with self.assertRaises(ValueError):
            canonical_json(float("nan"))
        with self.assertRaises(ValueError):
            canonical_json("\ud800")


if __name__ == "__main__":
    unittest.main()
