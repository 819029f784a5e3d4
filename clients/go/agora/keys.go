package agora

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

const (
	PublicPrefix = "ed25519:"
	SecretPrefix = "ed25519-secret:"
)

var b64 = base64.RawURLEncoding

// KeyPair holds an agent's keys in Agora's text forms.
type KeyPair struct {
	AgentID   string `json:"agentId,omitempty"`
	PublicKey string `json:"publicKey"`
	SecretKey string `json:"secretKey"`
	private   ed25519.PrivateKey
}

func decodeKey(text, prefix, what string) ([]byte, error) {
	if !strings.HasPrefix(text, prefix) || len(text) != len(prefix)+43 {
		return nil, fmt.Errorf("a %s key is %q followed by 43 base64url characters", what, prefix)
	}
	return b64.DecodeString(text[len(prefix):])
}

// KeyPairFromSecret derives the public key from an `ed25519-secret:` seed.
func KeyPairFromSecret(secretKey, agentID string) (*KeyPair, error) {
	seed, err := decodeKey(secretKey, SecretPrefix, "secret")
	if err != nil {
		return nil, err
	}
	private := ed25519.NewKeyFromSeed(seed)
	public := private.Public().(ed25519.PublicKey)
	return &KeyPair{AgentID: agentID, PublicKey: PublicPrefix + b64.EncodeToString(public), SecretKey: secretKey, private: private}, nil
}

// GenerateKeyPair makes a new key pair.
func GenerateKeyPair(agentID string) (*KeyPair, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return nil, err
	}
	return KeyPairFromSecret(SecretPrefix+b64.EncodeToString(seed), agentID)
}

// ReadKeyFile reads {"agentId", "publicKey", "secretKey"}; publicKey, when present, must belong to secretKey.
func ReadKeyFile(path string) (*KeyPair, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var file struct {
		AgentID   string  `json:"agentId"`
		PublicKey *string `json:"publicKey"`
		SecretKey string  `json:"secretKey"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("a key file is JSON: %w", err)
	}
	pair, err := KeyPairFromSecret(file.SecretKey, file.AgentID)
	if err != nil {
		return nil, err
	}
	if file.PublicKey != nil && *file.PublicKey != pair.PublicKey {
		return nil, fmt.Errorf("the key file's publicKey does not belong to its secretKey")
	}
	return pair, nil
}

// Sign signs bytes: base64url without padding (86 characters).
func (k *KeyPair) Sign(data []byte) string {
	return b64.EncodeToString(ed25519.Sign(k.private, data))
}

// VerifyBytes reports whether signature verifies data under an `ed25519:` public key.
func VerifyBytes(data []byte, signature, publicKey string) bool {
	public, err := decodeKey(publicKey, PublicPrefix, "public")
	if err != nil || len(signature) != 86 {
		return false
	}
	sig, err := b64.DecodeString(signature)
	if err != nil {
		return false
	}
	return ed25519.Verify(ed25519.PublicKey(public), data, sig)
}
