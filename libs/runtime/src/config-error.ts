/** A setting that makes no sense: the process says which and stops (exit code 2) before touching anything. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
