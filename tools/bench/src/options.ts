// What the benchmarks' command lines share.

/**
 * A reader of whole-number options for a benchmark whose usage text is `help`: a value that is not
 * a positive integer ends the process with code 2, naming the option and printing the usage.
 */
export function positiveIntOption(help: string): (value: string, name: string) => number {
  return (value, name) => {
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n <= 0) {
      console.error(`--${name} must be a positive integer, got ${JSON.stringify(value)}\n\n${help}`);
      process.exit(2);
    }
    return n;
  };
}
