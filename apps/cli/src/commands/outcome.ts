import { ReportOutcome } from '@agora/contracts';
import { EXIT, flag, requiredOption, stringOption, UsageError, type CommandSpec } from '../command.js';
import { gatewayReader, MIN_POSITION_OPTION, printJson, queryGateway } from '../gateway-client.js';
import { SIGNING, sendSigned } from './chamber.js';

const READ_OPTIONS = { ...MIN_POSITION_OPTION, json: { type: 'boolean', description: 'the query result as JSON' } } as const;
const rate = (value: number | null) => (value === null ? '-' : `${Math.round(value * 100)}%`);

export const outcomeReport: CommandSpec = {
  name: 'outcome report',
  brief: 'report whether an executed proposal worked or failed (its proposer or an operator)',
  summary:
    'Report the outcome of an executed proposal (ReportOutcome, signed by its proposer or an operator): it worked or it failed, with a note. Once per proposal: the same report again changes nothing, a different one is refused.',
  usage: '<proposalId> --worked|--failed --note <text> --key <file>',
  options: {
    ...SIGNING,
    worked: { type: 'boolean', description: 'it worked' },
    failed: { type: 'boolean', description: 'it failed' },
    note: { type: 'string', value: '<text>', description: 'what happened (kept in the log)' },
  },
  positionals: [{ name: 'proposalId', required: true, description: 'the executed proposal' }],
  examples: ['agora outcome report space-os --failed --note "no contributor came in two weeks" --key seldon.key.json'],
  async run(args, io) {
    const command = 'outcome report';
    const worked = flag(args, 'worked');
    if (worked === flag(args, 'failed')) throw new UsageError('say either --worked or --failed', command);
    await sendSigned(args, io, command, ReportOutcome.type, { proposalId: args.positionals[0]!, outcome: worked ? 'worked' : 'failed', note: requiredOption(args, 'note', command) });
    return EXIT.ok;
  },
};

export const outcomeCalibration: CommandSpec = {
  name: 'outcome calibration',
  brief: "each reviewer's verdicts against the proposals' outcomes",
  summary:
    'Per reviewer and constitution (GET /v1/tribunal/calibration): objections raised and upheld (by a revision, or by a failed outcome), not upheld, pending; approvals of proposals that worked and that failed. One page (--limit, default 100).',
  usage: '[--reviewer <agentId>] [--constitution <name>] [--limit <n>] [--min-position <position>] [--json]',
  options: {
    reviewer: { type: 'string', value: '<agentId>', description: 'only this reviewer' },
    constitution: { type: 'string', value: '<name>', description: 'only this constitution' },
    limit: { type: 'string', value: '<n>', description: 'how many rows (default 100, at most 1000)' },
    ...READ_OPTIONS,
  },
  positionals: [],
  examples: ['agora outcome calibration', 'agora outcome calibration --reviewer harbinger --json'],
  async run(args, io) {
    const command = 'outcome calibration';
    const reviewer = stringOption(args, 'reviewer');
    const constitution = stringOption(args, 'constitution');
    const limit = stringOption(args, 'limit');
    if (limit !== undefined && !/^[1-9][0-9]*$/.test(limit)) throw new UsageError('--limit must be a whole number from 1', command);
    const params = { ...(reviewer === undefined ? {} : { reviewer }), ...(constitution === undefined ? {} : { constitution }), ...(limit === undefined ? {} : { limit: Number(limit) }) };
    const page = await queryGateway(gatewayReader(args, io, command), 'GetReviewerCalibration', params, args);
    if (flag(args, 'json')) {
      printJson(io, page);
      return EXIT.ok;
    }
    const { executed, worked, failed } = page.outcomes;
    io.stdout(`executed proposals ${executed}: ${worked} worked, ${failed} failed, ${executed - worked - failed} not reported\n`);
    if (page.reviewers.length === 0) io.stdout('no reviews\n');
    for (const r of page.reviewers) {
      io.stdout(
        `${r.reviewer} (${r.constitution}): objections ${r.objections} (upheld ${r.upheldByRevision} by revision, ${r.upheldByOutcome} by outcome; not upheld ${r.notUpheld}; pending ${r.pending}; upheld rate ${rate(r.upheldRate)}); approvals ${r.approvals} (+${r.deemedApprovals} deemed), final approvals of proposals that worked ${r.approvalsWorked}, that failed ${r.approvalsFailed}\n`,
      );
    }
    if (page.nextCursor) io.stdout('(more: --limit or the query\'s nextCursor)\n');
    return EXIT.ok;
  },
};

export const outcomeValidators: CommandSpec = {
  name: 'outcome validators',
  brief: "each validator's votes against its sessions' final decisions",
  summary: "Per validator (GET /v1/voting/validators/agreement): votes cast, and how often an approve or deny agreed with the session's final decision (the operator's when a human decided).",
  usage: '[--validator <agentId>] [--min-position <position>] [--json]',
  options: { validator: { type: 'string', value: '<agentId>', description: 'only this validator' }, ...READ_OPTIONS },
  positionals: [],
  examples: ['agora outcome validators'],
  async run(args, io) {
    const command = 'outcome validators';
    const validator = stringOption(args, 'validator');
    const page = await queryGateway(gatewayReader(args, io, command), 'GetValidatorAgreement', validator === undefined ? {} : { validator }, args);
    if (flag(args, 'json')) {
      printJson(io, page);
      return EXIT.ok;
    }
    if (page.validators.length === 0) io.stdout('no votes\n');
    for (const v of page.validators) io.stdout(`${v.validator}: votes ${v.votes} (approve ${v.approve}, deny ${v.deny}, abstain ${v.abstain}); agreed ${v.agreed}, disagreed ${v.disagreed}; agreement ${rate(v.agreementRate)}\n`);
    return EXIT.ok;
  },
};

export const outcomeCommands: CommandSpec[] = [outcomeReport, outcomeCalibration, outcomeValidators];
