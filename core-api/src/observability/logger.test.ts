import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, REDACTED } from './logger.ts';

/** A logger whose lines are kept in memory. */
function captureLogger(level: 'info' | 'debug' = 'info') {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      callback();
    },
  });
  return { logger: createLogger({ level, destination }), lines };
}

const SECRET = 'sup3r-s3cret-value-that-must-not-leak';

describe('createLogger redaction', () => {
  it.each([
    ['securityKey'],
    ['security_key'],
    ['apiKey'],
    ['api_key'],
    ['privateKey'],
    ['adminToken'],
    ['password'],
    ['secret'],
    ['mnemonic'],
    ['PTS_MASTER_KEY'],
    ['DATABASE_URL'],
  ])('never prints %s at the top level or nested one or two levels', (key) => {
    const { logger, lines } = captureLogger();
    logger.info({ [key]: SECRET }, 'top');
    logger.info({ brand: { [key]: SECRET, name: 'Shop' } }, 'nested');
    logger.info({ input: { brand: { [key]: SECRET } } }, 'deeper');
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line).not.toContain(SECRET);
      expect(line).toContain(REDACTED);
    }
    expect(JSON.parse(lines[1] ?? '{}').brand.name).toBe('Shop');
  });

  it('redacts credential headers of a logged request but keeps the others', () => {
    const { logger, lines } = captureLogger();
    logger.info(
      {
        req: {
          method: 'POST',
          headers: {
            authorization: `Bearer ${SECRET}`,
            'x-pts-signature': SECRET,
            cookie: `session=${SECRET}`,
            'x-pts-timestamp': '1700000000',
          },
        },
      },
      'request',
    );
    const line = lines[0] ?? '';
    expect(line).not.toContain(SECRET);
    const parsed = JSON.parse(line);
    expect(parsed.req.headers.authorization).toBe(REDACTED);
    expect(parsed.req.headers['x-pts-signature']).toBe(REDACTED);
    expect(parsed.req.headers['x-pts-timestamp']).toBe('1700000000');
  });

  it('writes JSON lines with a level label and an ISO time, and honours the level', () => {
    const { logger, lines } = captureLogger('info');
    logger.debug('hidden');
    logger.warn({ brandId: '0xabc' }, 'shown');
    expect(lines).toHaveLength(1);
    const parsed = JSON.parse(lines[0] ?? '{}');
    expect(parsed).toMatchObject({ level: 'warn', msg: 'shown', brandId: '0xabc' });
    expect(new Date(parsed.time).toISOString()).toBe(parsed.time);
  });
});
