// An agent registered by the operator over HTTP submits a proposal over NATS.
//
//	cd clients/go && GO111MODULE=off GOPATH=/usr/share/gocode go run ./example
//
// against `NATS_URL=nats://127.0.0.1:4222 npm start` (standalone speaks NATS when NATS_URL is set).
package main

import (
	"fmt"
	"log"
	"os"
	"time"

	"github.com/nats-io/nats.go"

	agora "../agora"
)

func setting(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func main() {
	operator, err := agora.ReadKeyFile(setting("AGORA_OPERATOR_KEY_FILE", "../../data/operator.key.json"))
	if err != nil {
		log.Fatal(err)
	}
	bob, _ := agora.GenerateKeyPair("bob")
	gateway := agora.NewHTTPClient(setting("AGORA_URL", "http://127.0.0.1:8080"))

	// The operator registers bob over HTTP...
	register := map[string]interface{}{"agentId": "bob", "publicKey": bob.PublicKey, "displayName": "Bob", "roles": []string{"executive"}}
	if err := gateway.Command("RegisterAgent", register, operator, nil); err != nil {
		log.Fatal(err)
	}
	// ...and bob submits a proposal over NATS, on the subject the AsyncAPI document gives.
	conn, err := nats.Connect(setting("NATS_URL", "nats://127.0.0.1:4222"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	subjects, err := agora.SubjectsFromAsyncAPI(setting("AGORA_ASYNCAPI", "../../libs/contracts/generated/asyncapi.json"))
	if err != nil {
		log.Fatal(err)
	}
	client := &agora.NATSClient{Conn: conn, Timeout: 5 * time.Second, Subjects: subjects}
	var result agora.CommandResult
	proposal := map[string]interface{}{"proposalId": "p2", "title": "Onboarding", "body": "Add tutorial tooltips", "problem": "Users drop off"}
	if err := client.Command("SubmitProposal", proposal, bob, &result); err != nil {
		log.Fatal(err)
	}
	fmt.Println("events:", result.Events)
	var p struct{ Status string }
	// Read your writes: the query answers once it has seen the proposal (the command's log position).
	if err := gateway.Query("proposal", "proposals/p2", agora.WithMinPosition(nil, result.Position), &p); err != nil {
		log.Fatal(err)
	}
	fmt.Println("proposal p2 is", p.Status)
}
