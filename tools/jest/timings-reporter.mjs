// Records every suite's duration, one JSON line per suite, in test-results/timings.jsonl (ignored by git).
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

export default class TimingsReporter {
  constructor(globalConfig, options = {}) {
    this.root = globalConfig.rootDir;
    this.file = resolve(this.root, options.file ?? process.env.AGORA_TEST_TIMINGS ?? 'test-results/timings.jsonl');
    mkdirSync(dirname(this.file), { recursive: true });
  }

  onTestResult(test, result) {
    const record = {
      suite: relative(this.root, result.testFilePath),
      stage: test.context.config.displayName?.name ?? '',
      ms: result.perfStats.runtime ?? result.perfStats.end - result.perfStats.start,
      passed: result.numPassingTests,
      failed: result.numFailingTests,
      skipped: result.numPendingTests + result.numTodoTests,
      error: result.testExecError ? true : undefined,
      at: new Date(result.perfStats.end).toISOString(),
    };
    appendFileSync(this.file, JSON.stringify(record) + '\n');
  }
}
