package agora

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// A full tribunal round against a running Agora: AGORA_URL (the gateway), AGORA_OPERATOR_KEY_FILE,
// and AGORA_NATS_URL (the NATS server its services use; the round's commands then go over NATS).
func TestTribunalRound(t *testing.T) {
	base := os.Getenv("AGORA_URL")
	if base == "" {
		t.Skip("AGORA_URL is not set: no running Agora to play a round against")
	}
	httpClient := NewHTTPClient(base)
	operator, err := ReadKeyFile(os.Getenv("AGORA_OPERATOR_KEY_FILE"))
	if err != nil {
		t.Fatal(err)
	}
	run := newUUID()[:8]
	executive, _ := GenerateKeyPair("go-exec-" + run)
	constitutions := []string{"risk", "premise", "evidence", "execution"}
	reviewers := map[string]*KeyPair{}
	for _, c := range constitutions {
		reviewers[c], _ = GenerateKeyPair(fmt.Sprintf("go-%s-%s", c, run))
	}

	// Commands over NATS when a server is given, else over HTTP.
	var last CommandResult
	command := func(commandType string, payload map[string]interface{}, key *KeyPair) error {
		return httpClient.Command(commandType, payload, key, &last)
	}
	if natsURL := os.Getenv("AGORA_NATS_URL"); natsURL != "" {
		conn, err := nats.Connect(natsURL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		subjects, err := SubjectsFromAsyncAPI(generatedPath("asyncapi.json"))
		if err != nil {
			t.Fatal(err)
		}
		// Queries carry the operator's read token: services whose NATS reads are closed answer nothing without one.
		natsClient := &NATSClient{Conn: conn, Timeout: 10 * time.Second, Subjects: subjects, Reader: operator, Audience: os.Getenv("AGORA_READ_AUDIENCE")}
		command = func(commandType string, payload map[string]interface{}, key *KeyPair) error {
			return natsClient.Command(commandType, payload, key, &last)
		}
		// A query over NATS too.
		var agents struct{ Agents []interface{} }
		if err := natsClient.Query(subjects["Query_registry_agents_list"], nil, &agents); err != nil {
			t.Fatalf("agents over NATS: %v", err)
		}
	}

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(httpClient.Command("RegisterAgent", map[string]interface{}{"agentId": executive.AgentID, "publicKey": executive.PublicKey, "displayName": "Go executive", "roles": []string{"executive"}, "trustScore": 500}, operator, nil))
	for _, c := range constitutions {
		must(command("RegisterAgent", map[string]interface{}{"agentId": reviewers[c].AgentID, "publicKey": reviewers[c].PublicKey, "displayName": "Go " + c, "roles": []string{"reviewer"}, "constitutions": []string{c}, "trustScore": 500}, operator))
	}
	// Read your writes: listed at once when asked with the last registration's position.
	if last.Position == "" {
		t.Fatalf("RegisterAgent answered without a position: %+v", last)
	}
	agents, err := httpClient.QueryAll("registry", "agents", "agents", WithMinPosition(url.Values{"role": {"reviewer"}}, last.Position))
	must(err)
	seen := 0
	for _, raw := range agents {
		var a struct{ AgentID string }
		must(json.Unmarshal(raw, &a))
		for _, r := range reviewers {
			if a.AgentID == r.AgentID {
				seen++
			}
		}
	}
	if seen != len(reviewers) {
		t.Fatalf("%d of %d reviewers listed at position %s", seen, len(reviewers), last.Position)
	}
	behind := httpClient.Query("registry", "agents", WithMinPosition(nil, "999999999999"), nil)
	if e, ok := behind.(*Error); !ok || e.Code != ReadModelBehind || e.Status != 503 {
		t.Fatalf("a position the log has not reached: want %s (503), got %v", ReadModelBehind, behind)
	}

	proposalID := "go-" + run
	must(command("SubmitProposal", map[string]interface{}{"proposalId": proposalID, "title": "Tutorial tooltips", "body": "Tooltips on the first three screens — 検証", "problem": "Users drop off at step 2"}, executive))
	type proposal struct {
		Status string
		Rounds []struct {
			Round  int
			Status string
		}
	}
	get := func() proposal {
		var p proposal
		must(httpClient.Query("proposal", "proposals/"+proposalID, nil, &p))
		if p.Status == "escalated" {
			t.Fatalf("%s was escalated", proposalID)
		}
		return p
	}
	round := 0
	waitFor(t, "the review round to open", func() bool {
		for _, r := range get().Rounds {
			if r.Status == "open" {
				round = r.Round
				return true
			}
		}
		return false
	})
	err = command("SubmitReview", map[string]interface{}{"proposalId": proposalID, "round": round, "constitution": "risk", "verdict": "object", "reasoning": "feels wrong"}, reviewers["risk"])
	if e, ok := err.(*Error); !ok || e.Code != "invalid_command" {
		t.Fatalf("a vague objection: %v", err)
	}
	for _, c := range constitutions {
		must(command("SubmitReview", map[string]interface{}{"proposalId": proposalID, "round": round, "constitution": c, "verdict": "approve", "reasoning": "fine on " + c}, reviewers[c]))
	}
	waitFor(t, "the proposal to be approved", func() bool { return get().Status == "approved" })
}

func waitFor(t *testing.T, what string, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(40 * time.Second)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
