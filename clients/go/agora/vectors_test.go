package agora

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func generatedPath(name string) string {
	if dir := os.Getenv("AGORA_GENERATED_DIR"); dir != "" {
		return filepath.Join(dir, name)
	}
	return filepath.Join("..", "..", "..", "libs", "contracts", "generated", name)
}

type vectors struct {
	Keys []struct {
		Name, SeedHex, SecretKey, PublicKey string
	} `json:"keys"`
	CanonicalJSON []struct {
		Name, Input, Canonical, CanonicalUtf8Hex string
	} `json:"canonicalJson"`
	Envelopes []struct {
		Name, Signer, PublicKey, SignedText, SignedBytesBase64url, Signature string
		Envelope                                                             json.RawMessage
	} `json:"envelopes"`
	EventMetadata []struct {
		PublicKey  string
		Metadata   json.RawMessage
		Candidates []string
		Verifies   []bool
	} `json:"eventMetadata"`
	DomainTagged []struct {
		Tag, Signer, PublicKey, SignedText, Signature string
		Value                                         json.RawMessage
	} `json:"domainTagged"`
	ReadTokens []struct {
		Name, Signer, PublicKey, ClaimsJSON, SigningInput, Token string
		Claims                                                   ReadTokenClaims
	} `json:"readTokens"`
	MustNotVerify []struct {
		PublicKey, SignedText string
		Envelope              json.RawMessage
	} `json:"mustNotVerify"`
}

func load(t *testing.T) vectors {
	data, err := os.ReadFile(generatedPath("test-vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func decode(t *testing.T, raw []byte) interface{} {
	v, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestReadTokens(t *testing.T) {
	v := load(t)
	if len(v.ReadTokens) < 2 {
		t.Fatalf("expected read token vectors")
	}
	keys := map[string]*KeyPair{}
	for _, k := range v.Keys {
		pair, err := KeyPairFromSecret(k.SecretKey, k.Name)
		if err != nil {
			t.Fatal(err)
		}
		keys[k.Name] = pair
	}
	for _, r := range v.ReadTokens {
		token, err := SignReadToken(r.Claims, keys[r.Signer])
		if err != nil || token != r.Token {
			t.Errorf("%s: token %q %v", r.Name, token, err)
			continue
		}
		parts := strings.Split(token, ".")
		claims, _ := b64.DecodeString(parts[1])
		if string(claims) != r.ClaimsJSON || parts[0]+"."+parts[1] != r.SigningInput {
			t.Errorf("%s: claims %s", r.Name, claims)
		}
		if !VerifyBytes([]byte(r.SigningInput), parts[2], r.PublicKey) {
			t.Errorf("%s: signature does not verify", r.Name)
		}
	}
}

func TestKeys(t *testing.T) {
	for _, k := range load(t).Keys {
		seed, _ := hex.DecodeString(k.SeedHex)
		if k.SecretKey != SecretPrefix+b64.EncodeToString(seed) {
			t.Errorf("%s: secret key text", k.Name)
		}
		pair, err := KeyPairFromSecret(k.SecretKey, k.Name)
		if err != nil || pair.PublicKey != k.PublicKey {
			t.Errorf("%s: public key %v %v", k.Name, pair, err)
		}
	}
}

func TestCanonicalJSON(t *testing.T) {
	cases := load(t).CanonicalJSON
	if len(cases) < 6 {
		t.Fatalf("only %d canonical JSON cases", len(cases))
	}
	for _, c := range cases {
		out, err := CanonicalJSON(decode(t, []byte(c.Input)))
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if string(out) != c.Canonical || hex.EncodeToString(out) != c.CanonicalUtf8Hex {
			t.Errorf("%s:\n got %s\nwant %s", c.Name, out, c.Canonical)
		}
	}
}

func TestEnvelopes(t *testing.T) {
	v := load(t)
	keys := map[string]*KeyPair{}
	for _, k := range v.Keys {
		keys[k.Name], _ = KeyPairFromSecret(k.SecretKey, k.Name)
	}
	for _, e := range v.Envelopes {
		envelope := Envelope(decode(t, e.Envelope).(map[string]interface{}))
		data, err := SigningBytes(envelope)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != e.SignedText || b64.EncodeToString(data) != e.SignedBytesBase64url {
			t.Errorf("%s:\n got %s\nwant %s", e.Name, data, e.SignedText)
		}
		if sig := keys[e.Signer].Sign(data); sig != e.Signature {
			t.Errorf("%s: signature %s, want %s", e.Name, sig, e.Signature)
		}
		if !VerifyCommand(envelope, e.PublicKey) {
			t.Errorf("%s: does not verify", e.Name)
		}
	}
}

func TestEventMetadata(t *testing.T) {
	for _, m := range load(t).EventMetadata {
		metadata := decode(t, m.Metadata).(map[string]interface{})
		candidates := EnvelopesFromMetadata(metadata, metadata["commandPayload"])
		if len(candidates) != len(m.Candidates) {
			t.Fatalf("%d candidates, want %d", len(candidates), len(m.Candidates))
		}
		for i, c := range candidates {
			data, _ := SigningBytes(c)
			if string(data) != m.Candidates[i] || VerifyCommand(c, m.PublicKey) != m.Verifies[i] {
				t.Errorf("candidate %d: %s", i, data)
			}
		}
	}
}

func TestDomainTagged(t *testing.T) {
	v := load(t)
	for _, d := range v.DomainTagged {
		data, err := DomainSigningBytes(d.Tag, decode(t, d.Value))
		if err != nil || string(data) != d.SignedText {
			t.Errorf("%s: got %s (%v)", d.Tag, data, err)
		}
		if !VerifyBytes(data, d.Signature, d.PublicKey) {
			t.Errorf("%s: does not verify", d.Tag)
		}
	}
	for _, m := range v.MustNotVerify {
		envelope := Envelope(decode(t, m.Envelope).(map[string]interface{}))
		data, _ := SigningBytes(envelope)
		if string(data) != m.SignedText || VerifyCommand(envelope, m.PublicKey) {
			t.Errorf("a tampered envelope verified")
		}
	}
}
