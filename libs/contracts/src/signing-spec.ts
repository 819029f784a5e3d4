/**
 * The signing specification: how a client in any language signs a command, signs a resolution,
 * and re-verifies a signature from the log. One text, written into docs/any-language-agents.md (between
 * its `signing-spec` markers) and into the AsyncAPI and OpenAPI descriptions by `npm run contracts`;
 * the test vectors in libs/contracts/generated/test-vectors.json are its worked examples.
 * libs/identity implements it (canonicalJson, signingBytes, domainSigningBytes).
 */
import { commands } from './catalog.js';

/** Domain tags: the first line of every signed message, so bytes signed for one purpose never pass for another. */
export const SIGNING_TAGS = {
  /** Command envelopes (every command, over NATS or HTTP). */
  command: 'agora.command.v1',
  /** A party's signature of a dialectic resolution (the commands that say `signs: 'resolution'`). */
  resolution: 'agora.dialectic.resolution.v1',
  /** A login: the answer to a gateway's one-time challenge, which opens a browser session (the console). */
  login: 'agora.login.v1',
  /** An auditor's saved audit state (`agora audit --state`): where it verified the log up to, signed with its own key. */
  auditState: 'agora.audit-state.v1',
} as const;

/**
 * Logging in (the signing specification, "Logging in"): a gateway that closes reads hands out a
 * one-time challenge; the reader signs it with its key and gets a session cookie for its reads.
 */
export const LOGIN = {
  /** How long a challenge may be answered, in seconds; it is good for one attempt. */
  challengeSeconds: 60,
  /** How long a session lasts by default (AGORA_SESSION_SECONDS), in seconds. */
  sessionSeconds: 900,
  /** The session cookie's name (HttpOnly, SameSite=Strict, Path=/). */
  cookie: 'agora_session',
} as const;

/**
 * Read tokens (the signing specification, "Read tokens"): what an agent signs to prove who reads.
 * A compact JWS (RFC 7515) with EdDSA (RFC 8037), its header and claims canonical JSON, so a token
 * made from fixed claims is the same bytes in every language.
 */
export const READ_TOKEN = {
  /** The JWS header of every read token, exactly (canonical JSON: members in this order). */
  header: { alg: 'EdDSA', typ: 'agora.read.v1' },
  /** The longest lifetime accepted: exp - iat, in seconds. */
  maxLifetimeSeconds: 300,
  /** How far iat may lie ahead of, and exp behind, the gateway's clock, in seconds. */
  clockSkewSeconds: 60,
  /** The audience a gateway takes when none is configured (AGORA_READ_AUDIENCE). */
  defaultAudience: 'agora',
  /** The query parameter that carries a token for clients that cannot set a header (EventSource). */
  queryParameter: 'access_token',
  /** The NATS header that carries a token on a query (services with AGORA_NATS_READS=closed). */
  natsHeader: 'Agora-Read-Token',
} as const;

/** The envelope members a command signature covers, in the order the canonical form writes them (key order). */
export const SIGNED_ENVELOPE_FIELDS = ['actor', 'causationId', 'commandId', 'correlationId', 'issuedAt', 'payload', 'type'] as const;

/** Markdown, headed at level 2 (it sits under the level-1 title of docs/any-language-agents.md). */
/** The commands whose payload carries a signature under this tag, as the specification names them. */
const signing = (tag: 'resolution'): string =>
  commands
    .filter((c) => c.signs === tag)
    .map((c) => `\`${c.type}\``)
    .join(', ');

export const SIGNING_SPEC = `## Signing specification

Every command is signed by its actor with Ed25519; so is a party's agreement to a dialectic
resolution. A client in any language needs only this section, the JSON Schemas, and the test vectors
in \`libs/contracts/generated/test-vectors.json\` (every vector gives the exact bytes signed and the
signature; Ed25519 is deterministic, so a correct client reproduces them byte for byte). The
reference clients in \`clients/python\` and \`clients/go\` implement it and check the vectors.

**Keys.** Ed25519 (RFC 8032, pure Ed25519: no pre-hash, no context).

| form | text |
| --- | --- |
| public key | \`ed25519:\` + the 32-byte public key in base64url without padding (43 characters) |
| secret key | \`ed25519-secret:\` + the 32-byte seed (RFC 8032's private key) in base64url without padding (43 characters) |
| signature | the 64-byte signature in base64url without padding (86 characters); anything else does not verify |

base64url is RFC 4648 section 5 (\`-\` and \`_\`, no \`=\`).

**Key files** (what \`agora keys new\` writes and the standalone operator key \`<data dir>/operator.key.json\`):
a JSON object \`{"agentId": "alice", "publicKey": "ed25519:...", "secretKey": "ed25519-secret:..."}\`,
file mode 0600. \`secretKey\` is required; \`publicKey\`, when present, must be the key derived from the
seed (a file whose halves disagree is refused); \`agentId\` is the default actor. An operator key
file given to a service (\`AGORA_OPERATOR_KEY_FILE\`) may hold only \`agentId\` and \`publicKey\`.

**Canonical JSON** is RFC 8785, the JSON Canonicalization Scheme (JCS):
- no whitespace between tokens;
- object members sorted by name, names compared as sequences of UTF-16 code units (not code points,
  not UTF-8 bytes: \`"\\uFB33"\` sorts after \`"\\uD83D\\uDE00"\`); no duplicate names;
- strings: \`"\` and \`\\\` written \`\\"\` and \`\\\\\`; U+0008, U+0009, U+000A, U+000C, U+000D written
  \`\\b \\t \\n \\f \\r\`; every other code point below U+0020 written \`\\u00xx\` with lowercase hex;
  everything else written as itself, UTF-8 encoded (no \`\\/\`, no escaped non-ASCII; U+007F and
  U+2028 as themselves); a lone surrogate is an error;
- numbers are IEEE-754 doubles written as ECMAScript's Number.prototype.toString writes them: the
  shortest digits that read back to the same double; integers below 1e21 in plain digits
  (\`1.0\` → \`1\`, \`-0\` → \`0\`, \`1e20\` → \`100000000000000000000\`); from 1e21 up, and below 1e-6,
  exponent form with a sign and no leading zeros (\`1e+21\`, \`1e-7\`, \`1.5e-7\`); otherwise plain
  decimals (\`0.000001\`, \`0.1\`, \`123.456\`). An integer is a double too (\`295147905179352825856\` is
  written \`295147905179352830000\`). NaN and the infinities are errors. Precisely (ECMA-262
  Number::toString): take the shortest digits d1…dk and the n for which the value is
  0.d1…dk × 10^n; if k ≤ n ≤ 21, write the digits then n−k zeros; if 0 < n ≤ 21, the first n
  digits, \`.\`, the others; if −6 < n ≤ 0, \`0.\`, −n zeros, the digits; otherwise d1, then \`.\`
  and d2…dk when k > 1, then \`e\`, the sign of n−1 (\`+\` or \`-\`) and |n−1|; a negative number is
  \`-\` followed by the form of its absolute value;
- \`true\`, \`false\`, \`null\` as themselves; arrays keep their order.

So \`json.dumps(sort_keys=True, separators=(",", ":"))\` in Python is not canonical JSON (\`1.0\`,
\`1e-07\`, \`\\u00e9\`, code-point order); the reference clients show the few lines that are.

**Command signatures.** The bytes signed are the UTF-8 of

\`\`\`
"${SIGNING_TAGS.command}" + "\\n" + canonicalJson(unsigned envelope)
\`\`\`

where the unsigned envelope is the command envelope with exactly these members: \`commandId\`, \`type\`,
\`actor\`, \`issuedAt\`, \`payload\`, and \`correlationId\` and \`causationId\` when the envelope carries
them (a member that is absent is not written; \`null\` is not a value they take). \`signature\` is
not signed; a member the schema does not know is refused. The envelope sent is the unsigned one plus
\`signature\`, in any member order and with any whitespace: the service canonicalizes what it
receives. \`issuedAt\` is an ISO-8601 timestamp that must lie within \`AGORA_MAX_CLOCK_SKEW_MS\`
(default five minutes) of the service clock; \`commandId\` is a UUID, unique per command (a repeat is
answered with the first result and writes nothing).

**Other signatures** use the same construction with their own tag: the UTF-8 of
\`tag + "\\n" + canonicalJson(value)\`, signed with Ed25519 and sent as base64url.

| tag | value signed | carried by |
| --- | --- | --- |
| \`${SIGNING_TAGS.command}\` | the unsigned envelope (above) | every command's \`signature\` |
| \`${SIGNING_TAGS.resolution}\` | \`{"resolution": <the resolution payload>, "signer": <the signer's agent id>}\` | ${signing('resolution')} (\`publicKey\`, \`signature\`) |
| \`${SIGNING_TAGS.login}\` | \`{"aud": <the gateway's audience>, "challenge": <the challenge>, "sub": <agent id>}\` | \`POST /v1/login\` (\`signature\`), see "Logging in" |
| \`${SIGNING_TAGS.auditState}\` | an audit state without its \`signature\` (JSON as written: no undefined member) | \`agora audit --state <file>\` (\`signature\`, under the auditor's own key \`signedBy\`; docs/security.md) |

The resolution payload is the \`resolution\` of the \`ResolutionProposed\` event (or of the dialectic
session query's \`proposed\`), taken as it is: it has every member (\`null\` where empty) and its
\`conditions\` already in canonical order (sorted by their canonical JSON, each condition's
\`parameters\` by key). A tie-breaker or operator who decides signs the payload its decision
makes, built from the session (as the dialectic session query shows it): \`sessionId\`, \`agentId\`,
\`reviewer\` and \`pause\` of the session; \`rootCause\` and \`conditions\` of the position it sides
with (the tie-breaker: that side's latest; the operator: its own, as in DecideRecovery, with no surrounding whitespace), the
conditions in canonical order; \`decidedBy\` \`tie_break\` or \`operator\`; \`escalation\` the escalation
number (the operator: the last escalation's, or \`null\`); \`decider\` its own agent id. The signer's
registered key must be the one named in the command.

**Read tokens.** A read (an HTTP query, \`GET /v1/events\`, a debate's event stream) names its reader
with a short-lived token the reader signs itself with the key that signs its commands: a compact
JWS (RFC 7515, EdDSA as in RFC 8037), so a JWT library with the reader's public key verifies it too.

\`\`\`
token = base64url(header) + "." + base64url(claims) + "." + base64url(signature)
header = canonicalJson(${JSON.stringify(READ_TOKEN.header)})
claims = canonicalJson({"aud": <the gateway's audience>, "exp": <seconds>, "iat": <seconds>, "sub": <agent id>})
signature = Ed25519 over the ASCII of base64url(header) + "." + base64url(claims)
\`\`\`

base64url as above (no padding); \`iat\` and \`exp\` are whole seconds since 1970 (NumericDate);
\`jti\`, a string, is optional (the gateway does not remember tokens: a token is good for every read
until it expires, e.g. an event stream's reconnects). The signed bytes begin with \`eyJ\`, never with a
signing tag, so a read token never passes for a command or a resolution signature. The gateway accepts
the token as \`Authorization: Bearer <token>\` or, for clients that cannot set a header (EventSource), as
the query parameter \`${READ_TOKEN.queryParameter}\`, and refuses it with 401 and a code of its own when:

| code | when |
| --- | --- |
| \`unauthenticated\` | there is no token (and the gateway closes reads) |
| \`invalid_token\` | not three base64url parts, a header other than the one above, claims missing or of the wrong type |
| \`unknown_actor\` | \`sub\` is no registered agent |
| \`bad_signature\` | the signature does not verify under \`sub\`'s registered key |
| \`wrong_audience\` | \`aud\` is not the gateway's audience (\`AGORA_READ_AUDIENCE\`, default \`${READ_TOKEN.defaultAudience}\`; \`GET /health\` says it) |
| \`token_lifetime_too_long\` | \`exp - iat\` is over ${READ_TOKEN.maxLifetimeSeconds} seconds (or not positive) |
| \`token_not_yet_valid\` | \`iat\` is more than ${READ_TOKEN.clockSkewSeconds} seconds ahead of the gateway's clock |
| \`token_expired\` | \`exp\` is more than ${READ_TOKEN.clockSkewSeconds} seconds behind the gateway's clock |

(a disabled agent's token is \`actor_disabled\`, 403). The test vectors' \`readTokens\` give fixed claims and the exact token.

**Logging in.** A browser (the web console) reads with a session instead of tokens, so that no
script of the page ever holds something that reads on its own. \`POST /v1/login/challenge\` answers
\`{"challenge", "audience", "expiresAt"}\`: a random challenge (base64url) good for one attempt within
${LOGIN.challengeSeconds} seconds. The reader signs, with the key that signs its commands, the UTF-8 of

\`\`\`
"${SIGNING_TAGS.login}" + "\\n" + canonicalJson({"aud": <audience>, "challenge": <challenge>, "sub": <agent id>})
\`\`\`

and sends \`POST /v1/login\` with \`{"agentId", "challenge", "signature"}\`. Any registered, active
agent may log in; the reply is \`{"agentId", "roles", "expiresAt"}\` and a cookie \`${LOGIN.cookie}\`
(HttpOnly, SameSite=Strict, Path=/) that the gateway takes for a read token of that agent until the
session expires (${LOGIN.sessionSeconds} seconds unless configured) or \`POST /v1/logout\` ends it.
\`GET /v1/session\` says who the cookie reads as (204 without one). A challenge that is unknown, expired or already
tried is \`invalid_token\` (401); a signature that does not verify is \`bad_signature\`. The test
vectors' \`domainTagged\` include a login.

**A2A callers.** Agora as an A2A agent (\`POST /a2a\`, its Agent Card at
\`/.well-known/agent-card.json\`) knows its caller as every read does: by the read token above, as
\`Authorization: Bearer\` (the card's security scheme \`agoraReadToken\`, HTTP Bearer). The gateway
holds no agent's key and signs nothing for a caller: a skill's command rides in a data part of the A2A
message, \`{"command": <the signed envelope>}\` (or the envelope itself), signed by the caller exactly as
above, and goes to its service unchanged, which verifies it under the actor's registered key. An
envelope whose \`actor\` is not the token's \`sub\` is refused before it is sent (\`forbidden\`), so one
agent's token never carries another's command. A message without a signed command opens a task in
\`input-required\` whose status carries, in a data part, the unsigned envelope Agora drafted from the
message's fields (\`command\`: the caller as \`actor\`, a fresh \`commandId\`, \`issuedAt\`) and the
signing text's version (\`signing.version\`, \`agora.command.v1\`): the caller signs exactly that
envelope, as above, and sends it in a later message of the same task. A later turn of the same task (a revision, a recovery's
thesis, synthesis or \`SignResolution\`) is a signed command in a later message of the task, and a
cancellation is the signed cancelling command in \`tasks/cancel\`'s \`metadata.command\`. Every
command an A2A caller causes is therefore in the log under its own signature, re-verified by
\`agora audit\` like any other. Push notifications carry the credentials the caller put in its push
configuration (\`authentication\`: \`Authorization: <scheme> <credentials>\`), never an Agora key.

**Re-verifying an event from the log.** Every event appended because of a signed command carries,
in its \`metadata\` (schema: \`EventMetadata\` in the AsyncAPI components and every event schema):
\`actor\`, \`commandId\`, \`commandType\`, \`issuedAt\`, \`signature\`, \`correlationId\`, \`causationId\`
when the envelope had one, and, on the first event the command appended (the one whose id is
derived from the commandId with index 0; the other events of that commit carry the same
\`commandId\`), \`commandPayload\`: the payload exactly as signed. To re-verify:

1. find the first event of the commit with that \`commandId\` (events of one commit are contiguous
   in their stream) and take its \`commandPayload\`;
2. rebuild the unsigned envelope \`{commandId, type: commandType, actor, issuedAt, payload:
   commandPayload}\`, adding \`causationId\` when the metadata has one;
3. \`correlationId\`: the metadata always has one, the envelope's or, when the envelope had none,
   the commandId (the command starts its own chain). When it differs from \`commandId\`, add it.
   When it equals \`commandId\`, the envelope either omitted it or set it to its own commandId:
   verify without it, and if that fails, with it;
4. verify \`signature\` over \`"${SIGNING_TAGS.command}\\n" + canonicalJson(envelope)\` under the actor's
   public key as the registry had it (\`AgentRegistered\`, \`AgentKeyRotated\` in the log).

Events a service appends on its own behalf (a reaction, a deadline, a process step) are signed the
same way by the service's own key: the actor is \`service:<name>\` (\`service:tribunal\`,
\`service:voting\`, ...), the \`commandId\` is derived from the cause (so a repeat lands once),
\`issuedAt\` is the service clock, and \`causationId\` names the cause (the id of the event a
reaction answers, or the deadline key). Verify them exactly as above, under the service's public key
in force at \`issuedAt\` (the service keyring: \`AGORA_SERVICE_PUBLIC_KEYS\`, \`agora keys services\`).

**The commit chain.** Every event also carries \`prevCommitHash\`: hex SHA-256 of
\`"agora.commit-chain.v1\\n"\` followed by the canonical JSON of the previous commit's events as
\`[{id, type, data, metadata}, ...]\` (a commit is the consecutive events of a stream with one
\`commandId\`); a stream's first commit carries the genesis value, SHA-256 of
\`"agora.commit-chain.v1\\ngenesis\\n" + streamId\`. An edited, removed or inserted commit breaks
every link after it.
`;
