export { runCli, COMMANDS, VERSION } from './cli.js';
export { EXIT, type CommandSpec, type Io } from './command.js';
export { SseParser, type SseMessage } from './sse.js';
