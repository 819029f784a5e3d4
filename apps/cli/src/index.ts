export { runCli, COMMANDS, VERSION } from './cli.js';
export { EXIT, type CommandSpec, type Io } from './command.js';
export { describeEntry, describeSession } from './commands/chamber.js';
export { auditLog, LogAuditor, noStageTimes, STAGES, type AuditReport, type AuditOptions, type Finding, type Check, type StageTimes } from './audit/engine.js';
