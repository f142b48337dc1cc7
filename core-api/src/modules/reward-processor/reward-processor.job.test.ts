import { Writable } from 'node:stream';
import { AppError } from '@pts/shared';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Minter } from '../../chain/minter.types.ts';
import { startRewardProcessorJob } from './reward-processor.job.ts';

/** Runs the job every second with a minter whose pass fails with `error`; returns the levels logged. */
async function levelsLoggedFor(error: Error): Promise<string[]> {
  const lines: { level: string; msg: string }[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const logger = pino({ level: 'debug', formatters: { level: (label) => ({ level: label }) } }, stream);
  const minter = {
    processPending: async () => {
      throw error;
    },
  } as unknown as Minter;
  const job = startRewardProcessorJob({ minter, cronExpression: '* * * * * *', logger });
  await new Promise((resolve) => setTimeout(resolve, 2_100));
  await job.stop();
  return lines.filter((line) => line.msg.startsWith('reward processor')).map((line) => line.level);
}

describe('reward processor job', () => {
  it('does not log an error on a replica that does not hold the minter lock', async () => {
    const notLeader = new AppError('SERVICE_UNAVAILABLE', 'not the leader', { reason: 'not_minter_leader' });
    const levels = await levelsLoggedFor(notLeader);
    expect(levels.length).toBeGreaterThan(0);
    expect(levels.every((level) => level === 'debug')).toBe(true);
  });

  it('logs a failing pass as an error', async () => {
    const levels = await levelsLoggedFor(new Error('chain unreachable'));
    expect(levels.length).toBeGreaterThan(0);
    expect(levels.every((level) => level === 'error')).toBe(true);
  });
});
