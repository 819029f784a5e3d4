export { Agora, replyError, DEFAULT_TIMEOUT_MS, type ConnectOptions, type QueryOptions, type SendOptions } from './client.js';
export { signCommand, readToken, type Signer, type EnvelopeOptions } from './signing.js';
export type { SignedCommand } from '@agora/identity';
export { commandDefinition, queryDefinition, namedQueries, type CommandInput, type CommandName, type QueryName, type QueryParams, type QueryResult } from './catalog.js';
export type { AgoraEvent, EventFilter, Transport } from './transport.js';
export { HttpTransport, queryUrl, type HttpReader } from './http.js';
export { MessagingTransport, type NatsOptions } from './nats.js';
export { SseParser, type SseMessage } from './sse.js';
export { readAt, viewIfFound, waitOnLog, waitForDecision, waitForResolution, waitForVerdict, DEFAULT_WAIT_MS, type WaitOptions, type WaitSpec } from './wait.js';
export {
  fileCheckpoint,
  memoryCheckpoint,
  onDebateTurn,
  onDialecticTurn,
  onReviewRequested,
  onVoteRequested,
  runRoleLoop,
  uuidV5,
  ROLE_LOOP_NAMESPACE,
  type Action,
  type Checkpoint,
  type DialecticAnswer,
  type DialecticTurn,
  type ReviewAnswer,
  type RoleLoop,
  type RoleLoopOptions,
  type RoleSpec,
  type VoteAnswer,
} from './roles.js';
export { readToolPolicy, ruleFor, matchesPattern, ToolPolicy, PolicyRule } from './tool-policy.js';
export { parseConfigText } from './config-text.js';
export {
  governToolCall,
  openToolCall,
  awaitToolCall,
  releaseToolCall,
  recordToolCallResult,
  toolCallDigest,
  resultDigest,
  callSummary,
  toolCallDenied,
  approvalName,
  DEFAULT_DECISION_TIMEOUT_MS,
  type GovernedCall,
  type GovernOptions,
  type ToolCallDecision,
  type ToolCallApproval,
  type ToolCallSource,
  type HeldToolCall,
  type ToolCallOpening,
  type OpenOptions,
} from './governed.js';
export { governedTools, ToolCallRefused, type GovernedTools, type GovernedToolsOptions } from './ai-sdk.js';
export { governedAgentTools, type AgentFunctionTool, type AgentTool, type AgentToolApproval, type GovernedAgentTools, type GovernedAgentToolsOptions, type InterruptedRun } from './openai-agents.js';
export {
  governedToolNode,
  runGovernedGraph,
  type AgoraToolCallsInterrupt,
  type AgoraToolCallsResume,
  type GovernableGraph,
  type GovernedToolMessage,
  type GovernedToolNodeOptions,
  type GraphRunConfig,
  type GraphTool,
  type RunGovernedGraphOptions,
} from './langgraph.js';
export { AgoraError } from '@agora/contracts';
