import { describe, expect, it } from 'vitest';
import { compileContracts, readCommittedArtifacts } from './compile.ts';

describe('contract artifacts', () => {
  it('match a fresh compile of contracts/*.sol', async () => {
    const fresh = await compileContracts();
    const committed = readCommittedArtifacts();
    const stale = [...new Set([...fresh.keys(), ...committed.keys()])]
      .sort()
      .filter((file) => fresh.get(file) !== committed.get(file));
    expect(
      stale,
      `stale artifacts in core-api/src/chain/artifacts: run \`npm run contracts:compile\` and commit the result`,
    ).toEqual([]);
  });
});
