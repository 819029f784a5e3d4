// Prints one plain closing line, e.g. "jest: 212 passed, 0 failed, 4 skipped", after the usual report.
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stdout.write(`\njest: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`);
  }
}
