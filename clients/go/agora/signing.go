package agora

import (
	"crypto/rand"
	"fmt"
	"time"
)

const (
	CommandTag    = "agora.command.v1"
	ResolutionTag = "agora.dialectic.resolution.v1"
)

// SignedFields are the envelope members a command signature covers, when present.
var SignedFields = []string{"commandId", "type", "actor", "issuedAt", "payload", "correlationId", "causationId"}

// DomainSigningBytes is the UTF-8 of tag + "\n" + canonical JSON of value.
func DomainSigningBytes(tag string, value interface{}) ([]byte, error) {
	canonical, err := CanonicalJSON(value)
	if err != nil {
		return nil, err
	}
	return append([]byte(tag+"\n"), canonical...), nil
}

// Envelope is a command envelope as JSON members.
type Envelope map[string]interface{}

// SigningBytes are the bytes a command signature covers.
func SigningBytes(envelope Envelope) ([]byte, error) {
	signed := map[string]interface{}{}
	for _, k := range SignedFields {
		if v, ok := envelope[k]; ok {
			signed[k] = v
		}
	}
	return DomainSigningBytes(CommandTag, signed)
}

func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// SignCommand builds and signs an envelope: ready to POST to /v1/commands or to send on its NATS subject.
func SignCommand(commandType, actor string, payload map[string]interface{}, key *KeyPair) (Envelope, error) {
	envelope := Envelope{
		"commandId": newUUID(),
		"type":      commandType,
		"actor":     actor,
		"issuedAt":  time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		"payload":   payload,
	}
	data, err := SigningBytes(envelope)
	if err != nil {
		return nil, err
	}
	envelope["signature"] = key.Sign(data)
	return envelope, nil
}

// VerifyCommand reports whether the envelope's signature verifies under publicKey.
func VerifyCommand(envelope Envelope, publicKey string) bool {
	signature, _ := envelope["signature"].(string)
	data, err := SigningBytes(envelope)
	return err == nil && VerifyBytes(data, signature, publicKey)
}

// EnvelopesFromMetadata rebuilds the signed envelopes an event's metadata may stand for (the signing specification).
func EnvelopesFromMetadata(metadata map[string]interface{}, payload interface{}) []Envelope {
	base := Envelope{"payload": payload}
	for from, to := range map[string]string{"commandId": "commandId", "commandType": "type", "actor": "actor", "issuedAt": "issuedAt", "signature": "signature"} {
		s, ok := metadata[from].(string)
		if !ok {
			return nil
		}
		base[to] = s
	}
	if s, ok := metadata["causationId"].(string); ok {
		base["causationId"] = s
	}
	correlation, ok := metadata["correlationId"].(string)
	if !ok {
		return []Envelope{base}
	}
	with := Envelope{"correlationId": correlation}
	for k, v := range base {
		with[k] = v
	}
	if correlation != base["commandId"] {
		return []Envelope{with}
	}
	return []Envelope{base, with}
}
