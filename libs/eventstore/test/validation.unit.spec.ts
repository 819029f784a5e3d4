import { InvalidStreamName } from '../src/errors.js';
import { assertValidStreamId } from '../src/validation.js';

describe('stream names', () => {
  it('accepts <category>-<id>', () => {
    expect(() => assertValidStreamId('tribunal_review-0b9f1d2e-1c2d-4e5f-8a9b-123456789abc')).not.toThrow();
  });
  it('refuses a name without a category', () => {
    expect(() => assertValidStreamId('nodash')).toThrow(InvalidStreamName);
  });
});
