/**
 * Whether a page URL matches one of a rule's `urlPatterns` (spec 2.3: "URLs that trigger the event").
 *
 * - `https://shop.example.com/thanks` (has `://`): compared with the URL's origin + path;
 * - `/thanks`: compared with the URL's path;
 * - anything else (`thanks`, `shop.example.com/thanks`): found anywhere in host + path.
 *
 * `*` stands for any characters. A pattern with a `?` is compared with the query string too; without one
 * the query is ignored. The fragment is always ignored, and so is a trailing `/`.
 */
export function matchesUrlPattern(href: string, pattern: string): boolean {
  const url = new URL(href);
  const trimmed = pattern.trim();
  if (!trimmed) return false;
  const withQuery = trimmed.includes('?');
  const path = stripSlash(url.pathname) + (withQuery ? url.search : '');
  if (trimmed.includes('://')) {
    const origin = `${url.protocol}//${url.host}`;
    return globMatches(
      path.startsWith('/?') || path === '/' ? origin + path.slice(1) : origin + path,
      stripSlash(trimmed).replace(/\/(\?|$)/, '$1'),
      true,
    );
  }
  if (trimmed.startsWith('/')) return globMatches(path, stripSlash(trimmed), true);
  return globMatches(`${url.host}${path}`, trimmed, false);
}

/** Whether any pattern matches; an empty list matches nothing. */
export function matchesAnyUrlPattern(href: string, patterns: readonly string[] | undefined): boolean {
  return (patterns ?? []).some((pattern) => {
    try {
      return matchesUrlPattern(href, pattern);
    } catch {
      return false;
    }
  });
}

function stripSlash(value: string): string {
  const [path = '', query] = splitQuery(value);
  const bare = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return query === undefined ? bare : `${bare}?${query}`;
}

function splitQuery(value: string): [string, string | undefined] {
  const at = value.indexOf('?');
  return at < 0 ? [value, undefined] : [value.slice(0, at), value.slice(at + 1)];
}

function globMatches(subject: string, pattern: string, anchored: boolean): boolean {
  const body = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(anchored ? `^${body}$` : body, 'i').test(subject);
}
