// Tribunal contracts: the commands of the proposal service (the executive's submission, revision, withdrawal, execution and outcome report).
import { z } from 'zod';
import { EntityId, ShortText } from '../common.js';
import { defineCommand } from '../define.js';
import { Evidence, ObjectionId, ProposalClass, ProposalOutcome, ReviewDeadlineMs } from './policy.js';
import { Sha256Hex, ToolCallBinding, ToolCallOutcome } from '../voting/vocabulary.js';

// ---------------------------------------------------------------------------------------------
// Commands: proposal service (the executive)
// ---------------------------------------------------------------------------------------------

export const SubmitProposal = defineCommand({
  type: 'SubmitProposal',
  service: 'proposal',
  aggregate: 'proposal',
  verb: 'submit',
  roles: ['executive'],
  summary: 'Propose a plan or frame for the tribunal to review; the actor becomes its proposer and a first review round is requested',
  payload: z
    .object({
      proposalId: EntityId,
      title: ShortText(200),
      body: ShortText(20_000).describe('The plan or frame'),
      problem: ShortText(5000).describe('The problem it claims to solve'),
      evidence: z.array(Evidence).max(50).default([]).describe('What it rests on'),
      proposalClass: ProposalClass.default('default'),
      reviewDeadlineMs: ReviewDeadlineMs.optional().describe("Time-box of each round for this proposal, within the policy's bounds; default: the class's"),
      toolCall: ToolCallBinding.optional().describe('For a governed tool call (agora mcp-proxy, policy decision `tribunal`): the exact call this proposal decides; once approved, it is released for it once (ReleaseProposalToolCall)'),
    })
    .strict(),
});

export const ReviseProposal = defineCommand({
  type: 'ReviseProposal',
  service: 'proposal',
  aggregate: 'proposal',
  verb: 'revise',
  roles: ['executive'],
  relation: 'the executive that submitted the proposal',
  summary: 'Revise a proposal in answer to objections (proposer only): the answered objections are resolved, an open round is superseded, and a new round is requested',
  payload: z
    .object({
      proposalId: EntityId,
      body: ShortText(20_000).describe('The revised plan or frame'),
      problem: ShortText(5000).optional().describe('Unchanged when absent'),
      evidence: z.array(Evidence).max(50).optional().describe('Replaces the evidence; unchanged when absent'),
      title: ShortText(200).optional().describe('Unchanged when absent'),
      answers: z.array(ObjectionId).max(100).default([]).describe('The open objections this revision answers; the others stay open'),
    })
    .strict(),
});

export const WithdrawProposal = defineCommand({
  type: 'WithdrawProposal',
  service: 'proposal',
  aggregate: 'proposal',
  verb: 'withdraw',
  roles: ['executive'],
  relation: 'the executive that submitted the proposal',
  summary: 'Withdraw a proposal under review or escalated (proposer only); an open round closes',
  payload: z.object({ proposalId: EntityId, reason: ShortText(1000) }).strict(),
});

export const RecordExecution = defineCommand({
  type: 'RecordExecution',
  service: 'proposal',
  aggregate: 'proposal',
  verb: 'record_execution',
  roles: ['executive'],
  relation: 'the executive that submitted the proposal',
  summary: "Record that the proposal was executed (proposer only). Unless it was approved, ProceededDespiteObjections is recorded too, and the registry lowers the executive's trust",
  payload: z
    .object({
      proposalId: EntityId,
      summary: ShortText(5000).describe('What was done'),
      ref: ShortText(500).optional().describe('Where to see it (a commit, a run, a ticket)'),
    })
    .strict(),
});

export const ReportOutcome = defineCommand({
  type: 'ReportOutcome',
  service: 'proposal',
  aggregate: 'proposal',
  verb: 'report_outcome',
  roles: ['executive', 'operator'],
  relation: 'the executive that submitted the proposal, or any operator',
  summary:
    'Report whether an executed proposal worked or failed, with a note (its proposer or an operator; once the execution is recorded). One report per proposal, final: the same report again changes nothing, a different one is refused. The calibration figures compare the reviews with it',
  payload: z
    .object({
      proposalId: EntityId,
      outcome: ProposalOutcome,
      note: ShortText(5000).describe('What happened: the evidence for the verdict'),
    })
    .strict(),
});

export const ReleaseProposalToolCall = defineCommand({
  type: 'ReleaseProposalToolCall',
  service: 'proposal',
  aggregate: 'proposal',
  verb: 'release_tool_call',
  roles: ['executive'],
  relation: 'the executive that submitted a proposal for a tool call',
  summary:
    "Use an approved proposal's verdict for the tool call it was submitted for, before the call is forwarded: the digest must be the proposal's, the proposal approved, and the approval unused. Once: a second release is refused",
  payload: z.object({ proposalId: EntityId, callDigest: Sha256Hex }).strict(),
});

export const RecordProposalToolCallResult = defineCommand({
  type: 'RecordProposalToolCallResult',
  service: 'proposal',
  aggregate: 'proposal',
  verb: 'record_tool_call_result',
  roles: ['executive'],
  relation: 'the proposer, after releasing the call',
  summary: 'Record what became of a released tool call: its outcome and the sha256 of its result (the result itself stays with the agent). Once; the same record again changes nothing',
  payload: z.object({ proposalId: EntityId, outcome: ToolCallOutcome, resultDigest: Sha256Hex.describe('sha256 of the RFC 8785 canonical JSON of the tool result (of the error message when failed)') }).strict(),
});
