import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'options' | 'head';
export type SecuritySchemeName = 'brandSignature' | 'adminToken' | 'bearer' | 'agentKey' | 'portalSession';
type JsonSchema = Record<string, unknown>;

export interface ResponseDoc {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
}

/** One documented operation, described with the same zod schemas the route validates with. */
export interface RouteDoc {
  method: HttpMethod | Uppercase<HttpMethod>;
  /** Express path: `/admin/brands/:brandId`. */
  path: string;
  summary: string;
  description?: string;
  operationId?: string;
  tags?: string[];
  request?: {
    body?: z.ZodType;
    /** The media type of `body`; JSON unless set. */
    bodyContentType?: string;
    query?: z.ZodType;
    params?: z.ZodType;
    headers?: z.ZodType;
  };
  /** By status code (and optionally `default`); `schema` is the JSON body, `contentType` defaults to JSON. */
  responses: { [status: number]: ResponseDoc; default?: ResponseDoc };
  /** Each entry is an alternative: any one of them is enough. Omit for public routes. */
  security?: SecuritySchemeName[];
}

export interface DocumentInfo {
  title: string;
  version: string;
  description?: string;
  servers?: { url: string; description?: string }[];
}

export interface ApiDocs {
  /** Adds an operation; throws when the same method and path is registered twice. */
  register(route: RouteDoc): void;
  /** The OpenAPI 3.1 document of everything registered so far. */
  document(info: DocumentInfo): Record<string, unknown>;
}

const COMPONENT_PREFIX = '#/components/schemas/';

/** Security schemes every document offers. A brand signature is two headers, so it is two apiKey schemes. */
const SECURITY_SCHEMES = {
  brandTimestamp: {
    type: 'apiKey',
    in: 'header',
    name: 'X-PTS-Timestamp',
    description: 'Unix seconds when the request was signed; must be within the signature tolerance.',
  },
  brandSignature: {
    type: 'apiKey',
    in: 'header',
    name: 'X-PTS-Signature',
    description:
      'Lowercase hex HMAC-SHA256, under the brand security key, of `timestamp.METHOD.path-with-query.raw-body`. ' +
      'Always sent together with X-PTS-Timestamp.',
  },
  adminToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'The operator token (PTS_ADMIN_TOKEN).',
  },
  bearer: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'Identity-provider access token (JWT) of the user.',
  },
  agentKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-PTS-Agent-Key',
    description:
      'Agent API key id. Sent with X-PTS-Timestamp (Unix seconds) and X-PTS-Signature: lowercase hex ' +
      'HMAC-SHA256, under the agent secret, of `timestamp.METHOD.path-with-query.raw-body`; with the optional ' +
      'X-PTS-Nonce (8 to 64 of A-Z a-z 0-9 - _, fresh per request) of `timestamp.nonce.METHOD.path-with-query.raw-body` ' +
      '(docs/agent-api.md).',
  },
  portalSession: {
    type: 'apiKey',
    in: 'cookie',
    name: 'pts_portal_session',
    description:
      'A brand portal session (docs/portal.md). Changes also need the X-CSRF-Token header: the csrfToken of ' +
      'GET /portal/api/session.',
  },
} as const;

function securityRequirement(name: SecuritySchemeName): Record<string, string[]> {
  if (name === 'brandSignature') return { brandSignature: [], brandTimestamp: [] };
  // The agent signature travels in the same two headers as a brand's, under the agent's secret.
  if (name === 'agentKey') return { agentKey: [], brandSignature: [], brandTimestamp: [] };
  return { [name]: [] };
}

/** `/admin/brands/:brandId` → `/admin/brands/{brandId}`. */
export function toOpenApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function pathParameterNames(expressPath: string): string[] {
  return [...expressPath.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1] as string);
}

type Io = 'input' | 'output';

/**
 * Component names depend on every schema in the document (see `nameOf` below), so conversion leaves refs as
 * placeholders `pts-ref:<io>:<id>` and the finished document swaps them for `#/components/schemas/<name>`.
 */
const PLACEHOLDER = /^pts-ref:(input|output):(.+)$/;

interface Converted {
  root: JsonSchema;
  defs: Record<string, JsonSchema>;
}

function convert(schema: z.ZodType, io: Io): Converted {
  const json = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    // Our schemas preprocess (control-character stripping) and transform (lowercasing): `input` describes what
    // callers send; anything without a JSON Schema form becomes `{}` rather than failing the whole document.
    unrepresentable: 'any',
    metadata: z.globalRegistry,
  }) as JsonSchema;
  const { $schema: _dialect, $defs, ...root } = json;
  const toPlaceholder = (ref: string) => (ref.startsWith('#/$defs/') ? `pts-ref:${io}:${ref.slice(8)}` : ref);
  const defs = Object.fromEntries(
    Object.entries(($defs ?? {}) as Record<string, JsonSchema>).map(([id, def]) => [
      id,
      mapRefs(def, toPlaceholder) as JsonSchema,
    ]),
  );
  return { root: mapRefs(root, toPlaceholder) as JsonSchema, defs };
}

/** Copies a JSON value, passing every `$ref` string through `map`. */
function mapRefs(value: unknown, map: (ref: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => mapRefs(item, map));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = key === '$ref' && typeof item === 'string' ? map(item) : mapRefs(item, map);
  }
  return out;
}

/** Creates an empty route registry that renders an OpenAPI 3.1 document. */
export function createApiDocs(): ApiDocs {
  const routes: RouteDoc[] = [];
  const seen = new Set<string>();

  return {
    register(route) {
      const key = `${route.method.toLowerCase()} ${toOpenApiPath(route.path)}`;
      if (seen.has(key)) throw new Error(`API docs: ${key} is registered twice`);
      seen.add(key);
      routes.push(route);
    },

    document(info) {
      // id → its definition as seen with each io.
      const variants = new Map<string, Partial<Record<Io, JsonSchema>>>();
      const track = (schema: z.ZodType, io: Io): JsonSchema => {
        const converted = convert(schema, io);
        for (const [id, def] of Object.entries(converted.defs)) {
          const entry = variants.get(id) ?? {};
          entry[io] ??= def;
          variants.set(id, entry);
        }
        return converted.root;
      };
      const lookup = (root: JsonSchema): JsonSchema => {
        const match = typeof root.$ref === 'string' ? PLACEHOLDER.exec(root.$ref) : null;
        if (!match) return root;
        return variants.get(match[2] as string)?.[match[1] as Io] ?? {};
      };

      const paths: Record<string, Record<string, unknown>> = {};
      for (const route of routes) {
        const operation: Record<string, unknown> = { summary: route.summary };
        if (route.description) operation.description = route.description;
        operation.operationId = route.operationId ?? operationIdOf(route);
        if (route.tags?.length) operation.tags = route.tags;

        const parameters: Record<string, unknown>[] = [];
        const declaredPathParams = new Set<string>();
        for (const location of ['params', 'query', 'headers'] as const) {
          const schema = route.request?.[location];
          if (!schema) continue;
          const object = lookup(track(schema, 'input'));
          const properties = (object.properties ?? {}) as Record<string, JsonSchema>;
          const required = new Set((object.required ?? []) as string[]);
          const where = location === 'params' ? 'path' : location === 'query' ? 'query' : 'header';
          for (const [name, propertySchema] of Object.entries(properties)) {
            if (where === 'path') declaredPathParams.add(name);
            const { description, ...rest } = propertySchema;
            const parameter: Record<string, unknown> = {
              name,
              in: where,
              required: where === 'path' || required.has(name),
              schema: rest,
            };
            if (typeof description === 'string') parameter.description = description;
            parameters.push(parameter);
          }
        }
        // OpenAPI requires every templated path segment to be declared.
        for (const name of pathParameterNames(route.path)) {
          if (!declaredPathParams.has(name)) {
            parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
          }
        }
        if (parameters.length) operation.parameters = parameters;

        if (route.request?.body) {
          operation.requestBody = {
            required: true,
            content: {
              [route.request.bodyContentType ?? 'application/json']: { schema: track(route.request.body, 'input') },
            },
          };
        }

        const responses: Record<string, unknown> = {};
        for (const [status, response] of Object.entries(route.responses)) {
          const entry: Record<string, unknown> = { description: response.description };
          if (response.schema) {
            entry.content = {
              [response.contentType ?? 'application/json']: { schema: track(response.schema, 'output') },
            };
          }
          responses[status] = entry;
        }
        operation.responses = responses;
        if (route.security?.length) operation.security = route.security.map(securityRequirement);
        const path = toOpenApiPath(route.path);
        paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation };
      }

      // A schema whose input and output forms differ (transforms, defaults) becomes two components:
      // `X` for the output and `XInput` for what a caller sends.
      const split = splitVariants(variants);
      const nameOf = (id: string, io: Io): string => (io === 'input' && split.has(id) ? `${id}Input` : id);
      const resolve = (ref: string) => {
        const match = PLACEHOLDER.exec(ref);
        return match ? `${COMPONENT_PREFIX}${nameOf(match[2] as string, match[1] as Io)}` : ref;
      };
      const schemas: Record<string, unknown> = {};
      for (const [id, entry] of [...variants.entries()].sort(([a], [b]) => a.localeCompare(b))) {
        for (const io of ['output', 'input'] as const) {
          const def = entry[io];
          const name = nameOf(id, io);
          if (def && !(name in schemas)) schemas[name] = mapRefs(def, resolve);
        }
      }

      const document: Record<string, unknown> = {
        openapi: '3.1.0',
        info: {
          title: info.title,
          version: info.version,
          ...(info.description ? { description: info.description } : {}),
        },
        jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
      };
      if (info.servers?.length) document.servers = info.servers;
      document.paths = mapRefs(paths, resolve);
      document.components = { schemas, securitySchemes: SECURITY_SCHEMES };
      return document;
    },
  };
}

/**
 * Ids whose input and output forms differ: directly, or because they refer to a schema that does (its two
 * forms are two components, so the parent needs two forms to point at each).
 */
function splitVariants(variants: Map<string, Partial<Record<Io, JsonSchema>>>): Set<string> {
  const ignoreIo = (ref: string) => ref.replace(/^pts-ref:(input|output):/, 'pts-ref:');
  const split = new Set<string>();
  const referenced = new Map<string, Set<string>>();
  for (const [id, { input, output }] of variants) {
    if (!input || !output) continue;
    if (!isDeepStrictEqual(mapRefs(input, ignoreIo), mapRefs(output, ignoreIo))) split.add(id);
    const refs = new Set<string>();
    mapRefs([input, output], (ref) => {
      const match = PLACEHOLDER.exec(ref);
      if (match) refs.add(match[2] as string);
      return ref;
    });
    referenced.set(id, refs);
  }
  for (let changed = true; changed; ) {
    changed = false;
    for (const [id, refs] of referenced) {
      if (!split.has(id) && [...refs].some((ref) => split.has(ref))) {
        split.add(id);
        changed = true;
      }
    }
  }
  return split;
}

function operationIdOf(route: RouteDoc): string {
  const words = route.path
    .split('/')
    .filter(Boolean)
    .map((segment) => segment.replace(/^:/, 'by-'))
    .join('-')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  const camel = words.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('');
  return `${route.method.toLowerCase()}${camel || 'Root'}`;
}
