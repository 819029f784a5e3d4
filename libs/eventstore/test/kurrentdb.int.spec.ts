import { openKurrentDbEventStore } from '../src/kurrentdb/index.js';
import { describeEventStoreContract } from './contract.js';

const url = process.env['KURRENTDB_URL'];

if (url) {
  describeEventStoreContract('kurrentdb', () => openKurrentDbEventStore({ connectionString: url }));
} else {
  console.warn(
    'KurrentDB contract suite skipped: set KURRENTDB_URL (e.g. kurrentdb://127.0.0.1:2113?tls=false; `docker compose up -d kurrentdb`) to run it',
  );
  describe.skip('event store contract: kurrentdb (KURRENTDB_URL not set)', () => {
    it('runs only against a KurrentDB server', () => undefined);
  });
}
