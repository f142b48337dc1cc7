import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { signWebhookPayload, verifyWebhookSignature } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOC = resolve(import.meta.dirname, '../../../../docs/webhooks.md');
const SECRET = 'whsec_docs_example';

/** The ```js block that follows the `receiver.mjs` marker in docs/webhooks.md. */
function receiverSource(): string {
  const text = readFileSync(DOC, 'utf8');
  const match = /<!-- receiver\.mjs[^>]*-->\s*```js\n([\s\S]*?)\n```/.exec(text);
  if (!match?.[1]) throw new Error('docs/webhooks.md lost its receiver.mjs block');
  return match[1];
}

let dir: string;
let child: ChildProcess;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pts-webhook-doc-'));
  writeFileSync(join(dir, 'receiver.mjs'), receiverSource());
  child = spawn(process.execPath, ['receiver.mjs'], {
    cwd: dir,
    env: { PATH: process.env.PATH, PTS_WEBHOOK_SECRET: SECRET, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  url = await new Promise<string>((done, fail) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = /listening on (http:\/\/\S+)/.exec(out);
      if (found?.[1]) done(found[1]);
    });
    child.once('exit', (code) => fail(new Error(`receiver.mjs exited with ${code}`)));
  });
});

afterAll(() => {
  child?.kill();
  rmSync(dir, { recursive: true, force: true });
});

async function post(body: string, header: string | undefined) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(header ? { 'x-pts-signature': header } : {}) },
    body,
  });
  return { status: response.status, text: await response.text() };
}

describe('the receiver example in docs/webhooks.md', () => {
  it('accepts what the shared signer signs, refuses what the shared verifier refuses, for the same reason', async () => {
    const now = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({
      id: 'evt_0123456789abcdef0123456789abcdef',
      type: 'webhook.test',
      created: now,
      data: { brandId: '0xabc', message: 'hi', timestamp: now * 1000 },
    });
    const good = signWebhookPayload({ secret: SECRET, body, timestamp: now });
    const cases: [string, string | undefined, number, string][] = [
      [body, good, 200, 'ok'],
      [body, good, 200, 'duplicate'],
      [body.replace('"hi"', '"ho"'), good, 400, 'signature_mismatch'],
      [body, signWebhookPayload({ secret: 'whsec_wrong', body, timestamp: now }), 400, 'signature_mismatch'],
      [body, signWebhookPayload({ secret: SECRET, body, timestamp: now - 600 }), 400, 'timestamp_out_of_tolerance'],
      [body, signWebhookPayload({ secret: SECRET, body, timestamp: now + 600 }), 400, 'timestamp_out_of_tolerance'],
      [body, undefined, 400, 'missing_header'],
      [body, 't=abc,v1=xyz', 400, 'malformed_header'],
    ];
    for (const [sent, header, status, text] of cases) {
      const reply = await post(sent, header);
      expect(reply, `${header} → ${text}`).toEqual({ status, text });
      const shared = verifyWebhookSignature({ secret: SECRET, body: sent, header, now });
      if (status === 400) expect(shared).toEqual({ ok: false, reason: text });
      else expect(shared.ok).toBe(true);
    }
  });
});
