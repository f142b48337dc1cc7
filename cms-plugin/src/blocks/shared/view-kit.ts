import apiFetch from '@wordpress/api-fetch';

/** A REST error in WordPress's format (spec 7): `code`, `message`, `data.status`. */
export interface RestError {
  code: string;
  message: string;
  data?: { status?: number };
}

interface NonceAwareApiFetch {
  nonceEndpoint?: string;
  nonceMiddleware?: { nonce: string };
}

let session: Promise<boolean> | undefined;

/**
 * Whether the visitor is logged in, asked fresh on every page view: the page HTML may come from a page cache,
 * so the REST nonce printed in it may be another visitor's or stale. WordPress's own `rest-nonce` endpoint
 * (admin-ajax, never cached) answers a nonce for the current session only; it replaces the printed one.
 */
export function currentSession(): Promise<boolean> {
  session ??= (async () => {
    const fetcher = apiFetch as unknown as NonceAwareApiFetch;
    if (!fetcher.nonceEndpoint) return false;
    try {
      const response = await fetch(fetcher.nonceEndpoint, { credentials: 'same-origin', cache: 'no-store' });
      const nonce = (await response.text()).trim();
      if (!response.ok || !/^[0-9a-f]{6,32}$/.test(nonce)) return false;
      if (fetcher.nonceMiddleware) fetcher.nonceMiddleware.nonce = nonce;
      return true;
    } catch {
      return false;
    }
  })();
  return session;
}

/** Calls one of the plugin's routes (`/pts/v1/...`); rejects with a RestError. */
export async function callPts<T>(path: string, options: { method?: 'GET' | 'POST'; data?: object } = {}): Promise<T> {
  try {
    return await apiFetch<T>({ path: `/pts/v1${path}`, method: options.method ?? 'GET', data: options.data });
  } catch (error) {
    const rest = error as Partial<RestError>;
    throw {
      code: typeof rest.code === 'string' ? rest.code : 'api_error',
      message: typeof rest.message === 'string' ? rest.message : 'The rewards service is not answering right now.',
      data: rest.data,
    } satisfies RestError;
  }
}

type Child = Node | string | null | undefined | false;

/** Creates an element; text is always set as text (never parsed as HTML), so nothing needs escaping. */
export function el(
  tag: string,
  attributes: Record<string, string | boolean | undefined> = {},
  ...children: Child[]
): HTMLElement {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

/** A message line: `ok` (green), `error` (red) or plain. */
export function message(text: string, kind: 'ok' | 'error' | 'info' = 'info'): HTMLElement {
  return el('p', { class: `pts-message pts-${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

/** Tells the other widgets on the page that the user's points changed (they reload). */
export function announceChange(): void {
  document.dispatchEvent(new CustomEvent('pts:changed'));
}

/** Runs `mount` for every widget shell of this kind on the page, once the DOM is ready. */
export function mountAll(kind: string, mount: (root: HTMLElement) => void | Promise<void>): void {
  const start = () => {
    for (const root of document.querySelectorAll<HTMLElement>(`[data-pts-widget="${kind}"]`)) {
      if (root.dataset.ptsMounted) continue;
      root.dataset.ptsMounted = '1';
      void mount(root);
    }
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
}

/** The text shown to a visitor who is not logged in. */
export function loginPrompt(what: string): HTMLElement {
  return message(`Log in to ${what}.`);
}

/** "1 day" / "3 days". */
export function days(count: number): string {
  return `${count} ${count === 1 ? 'day' : 'days'}`;
}

/** Replaces a widget's content (null children are left out). */
export function fill(root: HTMLElement, ...children: Child[]): void {
  root.replaceChildren(...children.filter((child): child is Node | string => Boolean(child)));
}
