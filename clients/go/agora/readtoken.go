package agora

import (
	"fmt"
	"time"
)

// Read tokens (the signing specification, "Read tokens"): a compact JWS with EdDSA whose header and
// claims are canonical JSON, signed with the reader's own key.
const (
	ReadTokenMaxLifetimeSeconds = 300
	DefaultReadAudience         = "agora"
)

var readTokenHeader = map[string]interface{}{"alg": "EdDSA", "typ": "agora.read.v1"}

// ReadTokenClaims: who reads (Sub), at which gateway (Aud), from Iat to Exp (seconds since 1970); Jti optional.
type ReadTokenClaims struct {
	Sub string `json:"sub"`
	Aud string `json:"aud"`
	Iat int64  `json:"iat"`
	Exp int64  `json:"exp"`
	Jti string `json:"jti,omitempty"`
}

// SignReadToken is the token for exactly these claims (deterministic).
func SignReadToken(claims ReadTokenClaims, key *KeyPair) (string, error) {
	header, err := CanonicalJSON(readTokenHeader)
	if err != nil {
		return "", err
	}
	body := map[string]interface{}{"sub": claims.Sub, "aud": claims.Aud, "iat": claims.Iat, "exp": claims.Exp}
	if claims.Jti != "" {
		body["jti"] = claims.Jti
	}
	canonical, err := CanonicalJSON(body)
	if err != nil {
		return "", err
	}
	input := b64.EncodeToString(header) + "." + b64.EncodeToString(canonical)
	return input + "." + key.Sign([]byte(input)), nil
}

// MintReadToken is a fresh token for key's agent at audience (DefaultReadAudience when empty), issued now, for lifetime (1 to 300 s).
func MintReadToken(key *KeyPair, audience string, lifetime time.Duration) (string, error) {
	seconds := int64(lifetime / time.Second)
	if seconds < 1 || seconds > ReadTokenMaxLifetimeSeconds {
		return "", fmt.Errorf("a read token lives 1 to %d seconds", ReadTokenMaxLifetimeSeconds)
	}
	if key.AgentID == "" {
		return "", fmt.Errorf("a read token names its reader: the key pair has no agent id")
	}
	if audience == "" {
		audience = DefaultReadAudience
	}
	iat := time.Now().Unix()
	return SignReadToken(ReadTokenClaims{Sub: key.AgentID, Aud: audience, Iat: iat, Exp: iat + seconds}, key)
}
