import { deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Answer,
  type DocumentedRoute,
  expectHandled,
  type HostileWorld,
  jsonWithRaw,
  startHostileWorld,
} from '../../test/hostile-routes.ts';
import { kindOf, replaceAt } from '../../test/schema-values.ts';

// Input classes a red-team run turned into 500s (issue 11 §3), one test each, sent to every route
// /openapi.json documents plus the few it does not (test/hostile-routes.ts): each must be a 4xx that says
// what to fix, whatever the route, its auth or its body reader. Every test lists all the answers that fail,
// not the first. The fuzzed bodies, MCP tool arguments and hostile headers are in hostile-fuzz.test.ts.

let world: HostileWorld;

beforeAll(async () => {
  world = await startHostileWorld();
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

describe('hostile input on every route', { timeout: 300_000 }, () => {
  it('valid-shaped requests get past authentication: most routes answer 2xx', async () => {
    const answers: Answer[] = [];
    for (const route of world.routes) answers.push(await world.send(route, { label: 'valid:' }));
    expectHandled(answers);
    // The credentials work everywhere (so hostile input reaches the readers and validators behind them), and
    // most valid-shaped requests get all the way through (the rest fail a cross-field check or find no record).
    // (Portal sign-in with a made-up password is the one 401 a valid shape earns.)
    expect(
      answers
        .filter((a) => a.status === 401 && !a.label.includes('/portal/api/sign-in'))
        .map((a) => `${a.label} ${a.text.slice(0, 200)}`),
    ).toEqual([]);
    expect(answers.filter((a) => a.status < 300).length).toBeGreaterThan(80);
  });

  it('covers every documented route, the agent API and MCP', () => {
    expect(world.routes.length).toBeGreaterThan(120);
    expect(world.jsonBodies().length).toBeGreaterThan(45);
    const templates = world.routes.map((r) => r.template);
    expect(templates).toEqual(
      expect.arrayContaining([
        '/pts-api/manual-event',
        '/admin/brands',
        '/services/checkin',
        '/api/v1/brands/{brandId}/perks',
        '/api/v1/converse',
        '/mcp',
        '/health',
      ]),
    );
  });

  it('hostile path parameters on every route: 4xx or an answer, never 5xx', async () => {
    const hostile = [
      '%ED%A0%80', // a lone surrogate, UTF-8 encoded
      '%00',
      'a%00b',
      '%C0%80', // an overlong NUL
      '%FF',
      '%',
      'x'.repeat(3000),
      '9007199254740993',
      '-1',
      'NaN',
      'Infinity',
      '1e309',
      '%F0%9F%98%80',
      '..%2F..',
    ];
    const answers: Answer[] = [];
    let count = 0;
    for (const route of world.routes) {
      const names = route.parameters.filter((p) => p.in === 'path').map((p) => p.name);
      if (names.length) count++;
      for (const name of names) {
        for (const raw of hostile) {
          const path = world.pathOf(route, { name, raw });
          const query = world.requiredQuery(route).join('&');
          answers.push(
            await world.send(route, { pathWithQuery: query ? `${path}?${query}` : path, label: `path ${name}:` }),
          );
        }
      }
    }
    expect(count).toBeGreaterThan(50);
    expectHandled(answers);
    // A percent-encoded NUL is decoded into the parameter: refused before it reaches a query.
    const persona = answers.find((a) => a.label.includes('/intelligence/users/%00/persona'));
    expect(persona?.status).toBe(400);
    expect(JSON.parse(persona?.text ?? '{}').error.details).toMatchObject({ reason: 'nul_character' });
  });

  it('hostile query strings on every route: arrays, objects, surrogates, NUL, huge and non-finite numbers', async () => {
    const hostile = (name: string) => [
      `${name}=%ED%A0%80`,
      `${name}=%00`,
      `${name}=${'9'.repeat(400)}`,
      `${name}=${'x'.repeat(3000)}`,
      `${name}=1&${name}=2`,
      `${name}[]=1`,
      `${name}[a]=1`,
      `${name}=9007199254740993`,
      `${name}=-1`,
      `${name}=NaN`,
      `${name}=Infinity`,
      `${name}=1e309`,
      `${name}=1.5`,
      `${name}`,
    ];
    const answers: Answer[] = [];
    for (const route of world.routes) {
      // Documented query parameters, and on reads the one any list might take.
      const documented = route.parameters.filter((p) => p.in === 'query').map((p) => p.name);
      const names = new Set(route.method === 'GET' ? [...documented, 'limit'] : documented);
      for (const name of names) {
        for (const raw of hostile(name)) {
          const query = [...world.requiredQuery(route, name), raw].join('&');
          answers.push(await world.send(route, { pathWithQuery: `${world.pathOf(route)}?${query}`, label: 'query:' }));
        }
      }
    }
    expectHandled(answers);
  });

  it('a lone surrogate in every string position of a valid-shaped body: 4xx', async () => {
    const answers = await world.everyPosition('surrogate', (kind, isRoot) =>
      kind === 'string' ? ['a\ud800b', '\udc00'] : isRoot ? [{ '\ud800': 1 }] : [],
    );
    expectHandled(answers);
    const event = answers.find((a) => a.label.includes('/pts-api/manual-event'));
    expect(event?.status).toBe(400);
    expect(JSON.parse(event?.text ?? '{}').details).toMatchObject({ reason: 'lone_surrogate' });
  });

  it('a NUL in every string position of a valid-shaped body: 4xx', async () => {
    const answers = await world.everyPosition('NUL', (kind, isRoot) =>
      kind === 'string' ? ['a\u0000b'] : isRoot ? [{ 'a\u0000': 1 }] : [],
    );
    expectHandled(answers);
    const roles = answers.find((a) => a.label.includes('/services/chat-roles'));
    expect(roles?.status).toBe(400);
    expect(JSON.parse(roles?.text ?? '{}').details).toMatchObject({ reason: 'nul_character' });
  });

  it('a well-formed surrogate pair is text like any other', async () => {
    // A world.brand of its own: the other tests change the rules and keys of the shared one.
    const own = await world.platform.createBrand({
      domain: 'pair.example',
      rules: [{ eventType: 'purchase', rewardAmount: 5, cooldownHours: 0, maxClaims: -1 }],
    });
    const body = {
      brandId: own.brandId,
      eventType: 'purchase',
      userEmail: 'pair@example.com',
      metadata: { note: '😀' },
    };
    expect(JSON.stringify(body)).toContain('😀');
    const answer = await world.platform.signedPost('/pts-api/manual-event', body, own.securityKey);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const escaped = await fetch(`${world.platform.url}/pts-api/manual-event`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://pair.example' },
      body: JSON.stringify({ ...body, userEmail: 'pair2@example.com', metadata: {} }).replace(
        '"metadata":{}',
        '"metadata":{"note":"\\ud83d\\ude00"}',
      ),
    });
    expect(escaped.status, await escaped.text()).toBe(200);
  });

  it('numbers beyond the database int range, fractions and overflow in every numeric position: 4xx', async () => {
    const raw = [
      '2147483648',
      '-2147483649',
      '9223372036854775808',
      '9007199254740993',
      '1e400',
      '-1e400',
      '1.5',
      '1e-400',
    ];
    const markers = raw.map((_, i) => `__RAW_${i}__`);
    const answers = await world.everyPosition('number', (kind) => (kind === 'number' ? markers : []), raw);
    expect(answers.length).toBeGreaterThan(50);
    expectHandled(answers);
    // Beyond the int columns of the claim limits (1e-400 is JSON for 0, a valid limit).
    const limits = answers.filter(
      (a) => /at (maxClaims|maxTotal)/.test(a.label) && a.label.includes('/rules/') && !a.label.includes('RAW_7'),
    );
    // The admin API's and the portal's rule routes (7 each).
    expect(limits.length).toBe(28);
    for (const answer of limits) expect(answer.status, answer.text).toBe(400);
  });

  it('a wrong type in every position of a valid-shaped body: 4xx', async () => {
    const wrong: Record<string, unknown[]> = {
      string: [1, {}],
      number: ['1', null],
      boolean: ['true'],
      array: [{}, 'x'],
      object: [[], 'x'],
      null: [{}],
    };
    const answers = await world.everyPosition('type', (kind, isRoot) => [
      ...(wrong[kind] ?? []),
      ...(isRoot ? [null, 'x', 0, true] : []),
    ]);
    expectHandled(answers);
  });

  it('deeply nested JSON at the root and inside a field: 400, never a stack overflow', async () => {
    const deepArrays = `${'['.repeat(9000)}${']'.repeat(9000)}`;
    const deepObjects = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    const answers: Answer[] = [];
    for (const route of world.jsonBodies()) {
      const valid = world.values.valid(route.body);
      const field = world.values.positions(valid).find((p) => p.path.length === 1);
      for (const deep of [deepArrays, deepObjects]) {
        answers.push(await world.send(route, { body: deep, label: 'deep:' }));
        if (field)
          answers.push(
            await world.send(route, {
              body: jsonWithRaw(replaceAt(valid, field.path, '__RAW_0__'), [deep]),
              label: `deep at ${field.path}:`,
            }),
          );
      }
    }
    expectHandled(answers);
    const bulk = answers.find((a) => a.label.includes('/pts-api/bulk-events'));
    expect(bulk?.status).toBe(400);
    expect(JSON.parse(bulk?.text ?? '{}').details).toMatchObject({ reason: 'too_deep' });
  });

  it('a body that does not inflate as its Content-Encoding says, or an unknown encoding: 4xx on every route', async () => {
    const answers = await world.sendEach(
      world.routes.filter((r) => r.method !== 'GET'),
      (route) => {
        const valid = route.body ? JSON.stringify(world.values.valid(route.body)) : '{}';
        const truncated = gzipSync(valid).subarray(0, 12);
        const bodies = [
          ['gzip', valid],
          ['br', valid],
          ['deflate', valid],
          ['gzip', truncated],
          ['deflate', deflateSync(valid).subarray(0, 4)],
          ['compress', valid],
          ['gzip, br', valid],
        ] as const;
        return bodies.map(([encoding, body]) => ({
          body: Buffer.from(body),
          headers: { 'content-type': route.bodyType ?? 'application/json', 'content-encoding': encoding },
          label: `encoding ${encoding}:`,
        }));
      },
    );
    expectHandled(answers);
    const event = answers.find((a) => a.label.includes('encoding gzip: POST /pts-api/manual-event'));
    expect(event?.status).toBe(400);
  });

  it('an unsupported or bogus charset: 4xx on every route with a body', async () => {
    const answers = await world.sendEach(
      world.routes.filter((r) => r.body),
      (route) =>
        ['latin1', 'bogus', 'utf-16', 'utf-8; charset=latin1'].map((charset) => ({
          headers: { 'content-type': `${route.bodyType}; charset=${charset}` },
          label: `charset ${charset}:`,
        })),
    );
    expectHandled(answers);
    const checkout = answers.find((a) => a.label.includes('charset latin1: POST /pts-api/create-checkout'));
    expect(checkout?.status).toBe(415);
  });

  it('an oversize body, plain or as a gzip bomb: 413 on every route that reads a JSON body', async () => {
    const answers: Answer[] = [];
    const wrongStatus: string[] = [];
    const big = 'x'.repeat(3 * 1024 * 1024);
    for (const route of world.jsonBodies()) {
      const valid = world.values.valid(route.body);
      const padded = JSON.stringify(kindOf(valid) === 'object' ? { ...(valid as object), padding: big } : [valid, big]);
      for (const [label, body, encoding] of [
        ['oversize:', padded, undefined],
        ['gzip bomb:', gzipSync(padded), 'gzip'],
      ] as const) {
        const answer = await world.send(route, {
          body: Buffer.from(body),
          ...(encoding ? { headers: { 'content-type': 'application/json', 'content-encoding': encoding } } : {}),
          label,
        });
        answers.push(answer);
        if (answer.status !== 413) wrongStatus.push(`${answer.label} → ${answer.status} ${answer.text.slice(0, 200)}`);
      }
    }
    expectHandled(answers);
    expect(wrongStatus).toEqual([]);
  });

  it('the checkout form with too many fields, a bogus charset or a broken gzip body: 4xx', async () => {
    const pay = world.routes.find((r) => r.template === '/pts-api/checkout/{sessionId}/pay') as DocumentedRoute;
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const fields = Array.from({ length: 20 }, (_, i) => `f${i}=1`).join('&');
    expectHandled([
      await world.send(pay, { body: fields, headers: form }),
      await world.send(pay, { body: 'a=1', headers: { ...form, 'content-encoding': 'gzip' } }),
      await world.send(pay, {
        body: gzipSync('a=1'),
        headers: { 'content-type': `${form['content-type']}; charset=bogus`, 'content-encoding': 'gzip' },
      }),
      await world.send(pay, { body: 'a=%ED%A0%80&b=%00', headers: form }),
    ]);
  });

  it('every JSON answer says nosniff', async () => {
    const health = await world.platform.get('/health');
    expect(health.headers.get('x-content-type-options')).toBe('nosniff');
    const refused = await world.platform.post('/pts-api/manual-event', {});
    expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
