export { runCli, COMMANDS, VERSION } from './cli.js';
export { EXIT, type CommandSpec, type Io } from './command.js';
export { describeEntry, describeSession } from './commands/chamber.js';
export { auditLog, LogAuditor, type AuditReport, type AuditOptions, type Finding, type Check } from './audit/engine.js';
