import { READ_TOKEN, schemaOf, type QueryDefinition } from '@agora/contracts';

type Scalar = 'string' | 'number' | 'integer' | 'boolean' | 'other';

/** What a parameter's schema wants, for turning query-string text into JSON values. */
interface ParamShape {
  array: boolean;
  item: Scalar;
}

/** One GET route of a query: `/v1/<service>/<httpPath>`, its segments literal or `:param`. */
export interface QueryRoute {
  query: QueryDefinition;
  /** The route pattern, e.g. `/v1/registry/agents/:agentId`: the Nest path and the metrics label. */
  pattern: string;
  segments: ReadonlyArray<{ literal: string } | { param: string }>;
  /** Parameters whose schema wants a number, a boolean or an array (everything else stays text). */
  shapes: ReadonlyMap<string, ParamShape>;
}

function scalarOf(schema: unknown): Scalar {
  const type = (schema as { type?: unknown } | undefined)?.type;
  return type === 'string' || type === 'number' || type === 'integer' || type === 'boolean' ? type : 'other';
}

/** Reads the params schema (as JSON Schema) once per route. */
function shapesOf(query: QueryDefinition): Map<string, ParamShape> {
  const properties = (schemaOf(query.params)['properties'] ?? {}) as Record<string, { type?: unknown; items?: unknown }>;
  const shapes = new Map<string, ParamShape>();
  for (const [name, property] of Object.entries(properties)) {
    const shape: ParamShape = property.type === 'array' ? { array: true, item: scalarOf(property.items) } : { array: false, item: scalarOf(property) };
    if (shape.array || shape.item === 'number' || shape.item === 'integer' || shape.item === 'boolean') shapes.set(name, shape);
  }
  return shapes;
}

/** `"3"` -> 3 for a number, `"true"`/`"false"` -> a boolean; text that does not fit is left for the service to refuse. */
function convert(text: string, item: Scalar): unknown {
  if (item === 'boolean') return text === 'true' || text === '1' ? true : text === 'false' || text === '0' ? false : text;
  if (item === 'number' || item === 'integer') {
    const value = Number(text);
    return text.trim() !== '' && Number.isFinite(value) && (item === 'number' || Number.isInteger(value)) ? value : text;
  }
  return text;
}

export function queryRoutes(queries: readonly QueryDefinition[]): QueryRoute[] {
  return queries.map((query) => {
    const pattern = `/v1/${query.service}/${query.httpPath.replace(/^\/+|\/+$/g, '')}`;
    const segments = pattern
      .split('/')
      .filter((s) => s !== '')
      .map((s) => (s.startsWith(':') ? { param: s.slice(1) } : { literal: s }));
    return { query, pattern, segments, shapes: shapesOf(query) };
  });
}

/** The route a path takes, with its decoded path parameters; undefined when none does. */
export function matchQueryRoute(routes: readonly QueryRoute[], pathname: string): { route: QueryRoute; params: Record<string, string> } | undefined {
  const parts = pathname.split('/').filter((s) => s !== '');
  for (const route of routes) {
    if (route.segments.length !== parts.length) continue;
    const params: [string, string][] = [];
    const matches = route.segments.every((segment, i) => {
      const part = parts[i] as string;
      if ('literal' in segment) return segment.literal === part;
      try {
        params.push([segment.param, decodeURIComponent(part)]);
        return true;
      } catch {
        return false;
      }
    });
    if (matches) return { route, params: Object.fromEntries(params) };
  }
  return undefined;
}

/**
 * The params object of a query: query-string parameters, then path parameters, which win. Text
 * becomes what the params schema wants: a number, a boolean, an array (`?tag=a` is `["a"]` when
 * `tag` is an array; a repeated parameter is always an array). Built with Object.fromEntries, so a
 * `__proto__` key is a plain field.
 */
export function queryParams(route: QueryRoute, search: URLSearchParams, pathParams: Record<string, string>): Record<string, unknown> {
  const entries = new Map<string, unknown>();
  const valueOf = (name: string, texts: string[]): unknown => {
    const shape = route.shapes.get(name);
    const values = texts.map((t) => (shape ? convert(t, shape.item) : t));
    return shape?.array || values.length > 1 ? values : values[0];
  };
  for (const key of new Set(search.keys())) {
    // A read token is the gateway's to check, not a parameter of the query.
    if (key !== READ_TOKEN.queryParameter) entries.set(key, valueOf(key, search.getAll(key)));
  }
  for (const [key, value] of Object.entries(pathParams)) entries.set(key, valueOf(key, [value]));
  return Object.fromEntries(entries);
}
