package agora

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/nats-io/nats.go"
)

// Error is a refusal: {ok: false, error: {code, message, details}}.
type Error struct {
	Status  int
	Code    string                 `json:"code"`
	Message string                 `json:"message"`
	Details map[string]interface{} `json:"details"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (%d): %s", e.Code, e.Status, e.Message) }

type reply struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
}

func decodeReply(status int, body []byte, out interface{}) error {
	var r reply
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("not an Agora reply (%d): %s", status, body)
	}
	if !r.OK {
		if r.Error == nil {
			r.Error = &Error{}
		}
		r.Error.Status = status
		return r.Error
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(r.Result, out)
}

// HTTPClient speaks to the gateway.
type HTTPClient struct {
	BaseURL string
	HTTP    *http.Client
	// Reader, when set, signs a read token that every query carries (needed where the gateway closes reads).
	Reader *KeyPair
	// Audience of the read tokens: DefaultReadAudience when empty.
	Audience string
}

func NewHTTPClient(baseURL string) *HTTPClient {
	return &HTTPClient{BaseURL: baseURL, HTTP: &http.Client{Timeout: 10 * time.Second}}
}

// Send POSTs a signed envelope to /v1/commands; out receives the CommandResult.
func (c *HTTPClient) Send(envelope Envelope, out interface{}) error {
	body, err := json.Marshal(envelope)
	if err != nil {
		return err
	}
	res, err := c.HTTP.Post(c.BaseURL+"/v1/commands", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	return decodeReply(res.StatusCode, data, out)
}

// Command signs and sends a command as key's agent.
func (c *HTTPClient) Command(commandType string, payload map[string]interface{}, key *KeyPair, out interface{}) error {
	envelope, err := SignCommand(commandType, key.AgentID, payload, key)
	if err != nil {
		return err
	}
	return c.Send(envelope, out)
}

// CommandResult is what an accepted command answers with (CommandResult in the contracts).
type CommandResult struct {
	CommandID string   `json:"commandId"`
	StreamID  string   `json:"streamId"`
	Events    []string `json:"events"`
	Revision  int      `json:"revision"`
	// Position of the command's last event in the log: give it to a query as MinPositionParam to read your own write.
	Position  string `json:"position,omitempty"`
	Duplicate bool   `json:"duplicate"`
}

// MinPositionParam is the query parameter (and the field of a NATS query's body) that makes a query
// answer only once its read model has reached a log position; else the error code ReadModelBehind.
const MinPositionParam = "minPosition"

// ReadModelBehind is the error code (HTTP 503) of a query whose read model had not reached
// MinPositionParam within the bounded wait; Details has minPosition and position.
const ReadModelBehind = "read_model_behind"

// WithMinPosition returns a copy of params with MinPositionParam set to position (read your writes).
func WithMinPosition(params url.Values, position string) url.Values {
	out := url.Values{}
	for k, v := range params {
		out[k] = v
	}
	out.Set(MinPositionParam, position)
	return out
}

// Query GETs /v1/<service>/<path> with params in the query string.
func (c *HTTPClient) Query(service, path string, params url.Values, out interface{}) error {
	u := c.BaseURL + "/v1/" + service + "/" + path
	if len(params) > 0 {
		u += "?" + params.Encode()
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	if c.Reader != nil {
		token, err := MintReadToken(c.Reader, c.Audience, ReadTokenMaxLifetimeSeconds*time.Second)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	return decodeReply(res.StatusCode, data, out)
}

// QueryAll GETs every page of a list query (`limit` and `cursor` in, `nextCursor` out) and returns
// the items of the result's `field` (e.g. "agents"), in the list's order, 1,000 a request.
func (c *HTTPClient) QueryAll(service, path, field string, params url.Values) ([]json.RawMessage, error) {
	var items []json.RawMessage
	cursor := ""
	for {
		page := url.Values{}
		for k, v := range params {
			page[k] = v
		}
		page.Set("limit", "1000")
		if cursor != "" {
			page.Set("cursor", cursor)
		}
		var result map[string]json.RawMessage
		if err := c.Query(service, path, page, &result); err != nil {
			return nil, err
		}
		var list []json.RawMessage
		if err := json.Unmarshal(result[field], &list); err != nil {
			return nil, fmt.Errorf("%s/%s: no %q list in the result: %w", service, path, field, err)
		}
		items = append(items, list...)
		cursor = ""
		if next, ok := result["nextCursor"]; ok {
			if err := json.Unmarshal(next, &cursor); err != nil {
				return nil, err
			}
		}
		if cursor == "" {
			return items, nil
		}
	}
}

// ReadTokenHeader is the NATS header that carries a query's read token (services with AGORA_NATS_READS=closed,
// the default wherever NATS has users, refuse a query without one).
const ReadTokenHeader = "Agora-Read-Token"

// NATSClient speaks to the services over NATS: commands and queries are requests on their subjects.
type NATSClient struct {
	Conn    *nats.Conn
	Timeout time.Duration
	// Subjects maps a command type or a query name (`<service>.<name>`) to its subject.
	Subjects map[string]string
	// Reader, when set, signs a fresh one-minute read token for every query (header ReadTokenHeader), for Audience
	// (DefaultReadAudience when empty): who reads, for the visibility table.
	Reader   *KeyPair
	Audience string
}

// Request sends a JSON body on a subject and decodes the reply.
func (c *NATSClient) Request(subject string, body interface{}, out interface{}) error {
	return c.request(subject, body, nil, out)
}

func (c *NATSClient) request(subject string, body interface{}, header nats.Header, out interface{}) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	msg, err := c.Conn.RequestMsg(&nats.Msg{Subject: subject, Data: data, Header: header}, c.Timeout)
	if err != nil {
		return err
	}
	return decodeReply(0, msg.Data, out)
}

// Query asks a query by subject with its parameters, carrying the Reader's read token when a Reader is set.
func (c *NATSClient) Query(subject string, params map[string]interface{}, out interface{}) error {
	if params == nil {
		params = map[string]interface{}{}
	}
	if c.Reader == nil {
		return c.request(subject, params, nil, out)
	}
	token, err := MintReadToken(c.Reader, c.Audience, time.Minute)
	if err != nil {
		return err
	}
	return c.request(subject, params, nats.Header{ReadTokenHeader: []string{token}}, out)
}

// Command signs a command and sends it on its subject (from the AsyncAPI document).
func (c *NATSClient) Command(commandType string, payload map[string]interface{}, key *KeyPair, out interface{}) error {
	subject, ok := c.Subjects[commandType]
	if !ok {
		return fmt.Errorf("no subject for %s", commandType)
	}
	envelope, err := SignCommand(commandType, key.AgentID, payload, key)
	if err != nil {
		return err
	}
	return c.Request(subject, envelope, out)
}

// SubjectsFromAsyncAPI reads the message name -> subject map from libs/contracts/generated/asyncapi.json:
// command types (`SubmitProposal`), queries (`Query_proposal_proposals_get`) and event types.
func SubjectsFromAsyncAPI(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Channels map[string]struct {
			Address  *string                `json:"address"`
			Messages map[string]interface{} `json:"messages"`
		} `json:"channels"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	subjects := map[string]string{}
	for _, ch := range doc.Channels {
		if ch.Address == nil {
			continue
		}
		for name := range ch.Messages {
			subjects[name] = *ch.Address
		}
	}
	return subjects, nil
}
