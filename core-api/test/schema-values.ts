import fc from 'fast-check';

/**
 * Request values shaped by the JSON Schemas of /openapi.json (which the route tables generate from their zod
 * schemas): a valid-shaped value per schema, the positions of its leaves, and a fast-check arbitrary of the
 * same shape with hostile leaves. The hostile-input tests send these to every documented route.
 */

export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  minItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  format?: string;
  pattern?: string;
};

/** What a string named like this is, when the schema alone does not say (path parameters are plain strings). */
export interface KnownValues {
  brandId: string;
  securityKey: string;
  agentKeyId: string;
  email: string;
  eventType: string;
  domain: string;
}

export type Kind = 'string' | 'number' | 'boolean' | 'array' | 'object' | 'null';

/** One leaf (or container) of a value: where it is and what it holds. */
export interface Position {
  path: (string | number)[];
  kind: Kind;
}

const UUID = '00000000-0000-4000-8000-000000000001';
const ADDRESS = `0x${'a'.repeat(40)}`;

export class SchemaValues {
  constructor(
    private readonly components: Record<string, JsonSchema>,
    private readonly known: KnownValues,
  ) {}

  /** The schema behind `$ref` and single-branch combinators; `null` options dropped. */
  resolve(schema: JsonSchema | undefined): JsonSchema {
    let current = schema ?? {};
    for (let i = 0; i < 20; i++) {
      if (current.$ref) current = this.components[current.$ref.replace('#/components/schemas/', '')] ?? {};
      else if (current.allOf?.length) current = { ...current.allOf[0], ...current, allOf: undefined };
      else {
        const options = current.anyOf ?? current.oneOf;
        if (!options) return current;
        current = options.find((option) => this.resolve(option).type !== 'null') ?? options[0] ?? {};
      }
    }
    return current;
  }

  typeOf(schema: JsonSchema): string | undefined {
    const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
    if (type) return type;
    if (schema.properties) return 'object';
    if (schema.items) return 'array';
    return undefined;
  }

  /** A value the schema accepts as far as its shape goes (refinements in code may still refuse it). */
  valid(schema: JsonSchema | undefined, name = ''): unknown {
    const s = this.resolve(schema);
    if (s.const !== undefined) return s.const;
    if (s.enum?.length) return s.enum[0];
    switch (this.typeOf(s)) {
      case 'object': {
        const value: Record<string, unknown> = {};
        for (const [key, property] of Object.entries(s.properties ?? {})) value[key] = this.valid(property, key);
        if (!s.properties && typeof s.additionalProperties === 'object') {
          value.key = this.valid(s.additionalProperties, 'key');
        }
        return value;
      }
      case 'array': {
        if (s.prefixItems) return s.prefixItems.map((item) => this.valid(item, name));
        return Array.from({ length: Math.max(1, s.minItems ?? 0) }, () => this.valid(s.items, name));
      }
      case 'integer':
      case 'number': {
        const low = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1);
        return Math.min(Math.max(1, low), s.maximum ?? Number.MAX_SAFE_INTEGER);
      }
      case 'boolean':
        return true;
      case 'null':
        return null;
      default:
        return this.validString(s, name);
    }
  }

  validString(s: JsonSchema, name: string): string {
    const byName = this.byName(name);
    const candidates = [
      ...(byName ? [byName] : []),
      ...(s.format === 'uuid' ? [UUID] : []),
      ...(s.format === 'email' ? [this.known.email] : []),
      ...(s.format === 'uri' || s.format === 'url' ? ['https://hostile.example/x'] : []),
      ...(s.format === 'date-time' ? ['2026-01-01T00:00:00.000Z'] : []),
      ...(s.format === 'date' ? ['2026-01-01'] : []),
      'fuzz',
      ADDRESS,
      `0x${'a'.repeat(64)}`,
      UUID,
      this.known.email,
      '123',
      'https://hostile.example/x',
      '2026-01-01T00:00:00.000Z',
      '2026-01-01',
      'hostile-example',
      '#ffffff',
    ];
    const pattern = s.pattern ? new RegExp(s.pattern, 'u') : undefined;
    const fits = (text: string) =>
      (!pattern || pattern.test(text)) && text.length >= (s.minLength ?? 0) && text.length <= (s.maxLength ?? 1e9);
    const found = candidates.find(fits);
    if (found) return found;
    return 'x'.repeat(Math.max(1, s.minLength ?? 1));
  }

  private byName(name: string): string | undefined {
    if (/^brand_?id$/i.test(name)) return this.known.brandId;
    if (/^securityKey$/.test(name)) return this.known.securityKey;
    if (/^keyId$/.test(name)) return this.known.agentKeyId;
    if (/^chatGroupId$/.test(name)) return 'discord:1234567890';
    if (/email|userIdentifier|userId$/i.test(name)) return this.known.email;
    if (/^eventType$/.test(name)) return this.known.eventType;
    if (/domain/i.test(name)) return this.known.domain;
    if (/wallet|address/i.test(name)) return ADDRESS;
    if (/url$/i.test(name)) return 'https://hostile.example/x';
    return undefined;
  }

  /** Every position of `value` (containers and leaves), walking it as built by `valid`. */
  positions(value: unknown, path: (string | number)[] = []): Position[] {
    const kind = kindOf(value);
    const here: Position[] = [{ path, kind }];
    if (Array.isArray(value)) return [...here, ...value.flatMap((item, i) => this.positions(item, [...path, i]))];
    if (value && typeof value === 'object') {
      return [...here, ...Object.entries(value).flatMap(([key, item]) => this.positions(item, [...path, key]))];
    }
    return here;
  }

  /**
   * Values of the schema's shape whose leaves are often hostile: any code point, lone surrogates, NUL,
   * overlong text, huge or fractional numbers, and now and then a wrong type anywhere.
   */
  arbitrary(schema: JsonSchema | undefined, name = '', depth = 0): fc.Arbitrary<unknown> {
    const s = this.resolve(schema);
    const shaped = this.shaped(s, name, depth);
    return fc.oneof({ weight: 6, arbitrary: shaped }, { weight: 1, arbitrary: wrongType });
  }

  private shaped(s: JsonSchema, name: string, depth: number): fc.Arbitrary<unknown> {
    if (s.const !== undefined || s.enum?.length) {
      return fc.oneof(fc.constantFrom(...(s.enum ?? [s.const])), hostileString);
    }
    switch (this.typeOf(s)) {
      case 'object': {
        if (depth > 4) return fc.constant(this.valid(s, name));
        const model: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [key, property] of Object.entries(s.properties ?? {})) {
          model[key] = this.arbitrary(property, key, depth + 1);
        }
        return fc.record(model, { requiredKeys: s.required?.filter((key) => key in model) ?? [] });
      }
      case 'array':
        if (depth > 4) return fc.constant(this.valid(s, name));
        return fc.array(this.arbitrary(s.items, name, depth + 1), { maxLength: 3 });
      case 'integer':
      case 'number':
        return fc.oneof(fc.constant(this.valid(s, name)), hostileNumber);
      case 'boolean':
        return fc.oneof(fc.boolean(), wrongType);
      default:
        return fc.oneof(
          { weight: 2, arbitrary: fc.constant(this.valid(s, name)) },
          { weight: 3, arbitrary: hostileString },
        );
    }
  }
}

export function kindOf(value: unknown): Kind {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  return 'string';
}

/** A copy of `value` with `replacement` at `path` (the root when the path is empty). */
export function replaceAt(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  parent[path[path.length - 1] as string | number] = replacement;
  return copy;
}

const surrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));

/** Text no route should choke on: any code point, any UTF-16 unit (lone surrogates), NUL, controls, overlong. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 16 }),
  fc.string({ unit: fc.oneof(surrogate, fc.constantFrom('\u0000', 'a', '\u202e', '\ufffe')), maxLength: 6 }),
  fc.constantFrom('', ' ', '\u0000', '\ud800', 'a\udc00', '%00', '../..', "' OR 1=1 --", 'x'.repeat(5000)),
);

/** Numbers beyond every column type, fractions where integers are due, negative zero. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 2, 2 ** 63, -(2 ** 63), 1e308, -1e308, 0.5, -0, -1, 0),
);

/** A value of the wrong JSON type for most positions. */
export const wrongType: fc.Arbitrary<unknown> = fc.constantFrom(null, 'text', 42, true, [], {}, [1, 'a'], { a: 1 });
